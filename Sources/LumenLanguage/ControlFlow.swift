/// How `break`, `continue` and `return` leave the statements they stand in: thrown through
/// the interpreter up to the loop or call that handles them.
enum ControlFlow: Error {
    case breakLoop(SourceLocation)
    case continueLoop(SourceLocation)
    case returnValue(Value)
}

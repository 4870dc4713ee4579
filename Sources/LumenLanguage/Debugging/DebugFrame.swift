/// A place code runs, as the debugger's call stack shows it: the function (nil for a cell's own
/// code), its source and line, the scope its variables are in, and how many calls deep it is.
struct DebugFrame: Sendable {
    /// The function running, or nil for the cell's own statements.
    let function: String?
    /// The source the code is in (the cell a function was written in).
    let source: SourceText
    /// The line running, from 1.
    let line: Int
    /// The innermost scope of the code running.
    let scope: Scope
    /// How many calls deep the frame is (0: the cell).
    let depth: Int

    /// The name the call stack shows: the function's, or the cell's label.
    var name: String { function ?? source.label }
}

/// The frames that called the code running, innermost first: each call adds one to its
/// callee's context, while the debugger is started, so a stop can show the whole stack.
final class CallerFrames: Sendable {
    /// The calling frame, where it made the call.
    let frame: DebugFrame
    /// The frames that called it.
    let outer: CallerFrames?

    init(frame: DebugFrame, outer: CallerFrames?) {
        self.frame = frame
        self.outer = outer
    }
}

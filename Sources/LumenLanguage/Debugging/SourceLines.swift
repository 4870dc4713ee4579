// Where statements and expressions start, by line: the lines a breakpoint can be set on and the
// line a stop shows.

extension Statement {
    /// The line the statement starts on: where a breakpoint on it is set and where a stop shows.
    var firstLine: Int {
        switch self {
        case .expression(let expression): expression.firstLine
        case .declaration(_, _, _, let location), .assignment(_, _, _, let location), .forIn(_, _, _, let location),
             .breakLoop(let location), .continueLoop(let location), .returnValue(_, let location), .function(_, _, let location):
            location.line
        case .conditional(let branches, _): branches.first?.condition.firstLine ?? 1
        case .whileLoop(let condition, _): condition.firstLine
        }
    }

    /// The lines in `statements` where a statement starts, those inside blocks, functions and
    /// closures included: the lines a breakpoint can be verified on. (An explicit work list,
    /// so the walk's depth is not the program's.)
    static func lines(of statements: [Statement]) -> Set<Int> {
        var lines: Set<Int> = []
        var pendingStatements = statements
        var pendingExpressions: [Expression] = []
        while !pendingStatements.isEmpty || !pendingExpressions.isEmpty {
            if let statement = pendingStatements.popLast() {
                lines.insert(statement.firstLine)
                switch statement {
                case .expression(let expression): pendingExpressions.append(expression)
                case .declaration(_, _, let value, _): pendingExpressions += value.map { [$0] } ?? []
                case .assignment(let target, _, let value, _): pendingExpressions += [target, value]
                case .conditional(let branches, let otherwise):
                    pendingExpressions += branches.map(\.condition)
                    pendingStatements += branches.flatMap(\.body) + (otherwise ?? [])
                case .forIn(_, let sequence, let body, _):
                    pendingExpressions.append(sequence)
                    pendingStatements += body
                case .whileLoop(let condition, let body):
                    pendingExpressions.append(condition)
                    pendingStatements += body
                case .returnValue(let value, _): pendingExpressions += value.map { [$0] } ?? []
                case .function(_, let closure, _): pendingStatements += closure.body
                case .breakLoop, .continueLoop: break
                }
            } else if let expression = pendingExpressions.popLast() {
                if case .closure(let closure, _) = expression { pendingStatements += closure.body }
                pendingExpressions += expression.children
            }
        }
        return lines
    }
}

extension Expression {
    /// The line the expression's text starts on (a binary expression's location is its
    /// operator's; its text starts with its left operand).
    var firstLine: Int {
        var leftmost = self
        while true {
            switch leftmost {
            case .binary(_, let left, _, _): leftmost = left
            case .ternary(let condition, _, _, _): leftmost = condition
            case .call(let callee, _, _): leftmost = callee
            case .member(let base, _, _), .subscripted(let base, _, _): leftmost = base
            default: return leftmost.location.line
            }
        }
    }

    /// The expressions directly inside this one.
    var children: [Expression] {
        switch self {
        case .literal, .identifier, .shorthandArgument, .closure: []
        case .interpolation(let parts, _): parts.compactMap { if case .expression(let inner) = $0 { inner } else { nil } }
        case .array(let items, _), .indices(let items, _): items
        case .dictionary(let pairs, _): pairs.flatMap { [$0.key, $0.value] }
        case .unary(_, let operand, _): [operand]
        case .binary(_, let left, let right, _): [left, right]
        case .ternary(let condition, let then, let otherwise, _): [condition, then, otherwise]
        case .call(let callee, let arguments, _): [callee] + arguments.map(\.value)
        case .member(let base, _, _): [base]
        case .subscripted(let base, let index, _): [base, index]
        }
    }
}

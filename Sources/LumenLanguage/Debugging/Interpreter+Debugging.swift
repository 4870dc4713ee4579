import Evaluation

/// The interpreter's side of the debugger: the places a cell may stop, and the frames it shows.
extension Interpreter {
    /// Stops before `statement` if the client asked (a breakpoint on its line, a step, a pause)
    /// and it runs in a cell.
    func stopIfAsked(before statement: Statement, in scope: Scope, context: RunContext) async throws {
        let thread = RunningCell.current.thread
        let line = statement.firstLine
        guard thread != 0, let reason = debugger.stopReason(thread: thread, source: context.source, line: line, depth: context.depth) else { return }
        try await debugger.stop(thread: thread, reason: reason, frames: frames(at: line, in: scope, context: context), output: context.output)
    }

    /// Stops where `error` was raised, by `statement`, when the client asked to stop on errors;
    /// returns the error to throw on, marked so the statements it passes through on its way out
    /// do not stop again.
    func stop(at error: LumenError, raisedBy statement: Statement, in scope: Scope, context: RunContext) async throws -> LumenError {
        var error = error
        error.seenByDebugger = true
        let thread = RunningCell.current.thread
        guard thread != 0 else { return error }
        try await debugger.stop(thread: thread, reason: .exception("\(error.kind.rawValue): \(error.message)"),
                                frames: frames(at: error.location?.line ?? statement.firstLine, in: scope, context: context), output: context.output)
        return error
    }

    /// The frame running at `line` of `context`'s code, in `scope`.
    func frame(at line: Int, in scope: Scope, context: RunContext) -> DebugFrame {
        DebugFrame(function: context.function, source: context.source, line: line, scope: scope, depth: context.depth)
    }

    /// The call stack at `line` of `context`'s code, innermost first.
    private func frames(at line: Int, in scope: Scope, context: RunContext) -> [DebugFrame] {
        var frames = [frame(at: line, in: scope, context: context)]
        var caller = context.callers
        while let next = caller {
            frames.append(next.frame)
            caller = next.outer
        }
        return frames
    }

    /// Evaluates `text` for the client (`evaluate`, a watch, the debug console) in `frame`'s
    /// scope, or the globals: one expression gives its value; statements run and give nil. The
    /// code runs outside any cell, so it never stops at a breakpoint itself.
    func evaluateForDebugger(_ text: String, in frame: DebugFrame?, output: any OutputSink) async throws -> Value {
        let statements = try Parser.parse(text)
        var context = RunContext(output: output, depth: frame?.depth ?? 0, source: SourceText(label: "<debugger>", text: text))
        let scope = frame?.scope ?? globals
        if statements.count == 1, case .expression(let expression) = statements[0] {
            return try await evaluate(expression, in: scope, context: &context)
        }
        try await run(statements, in: scope, context: &context)
        return .null
    }
}

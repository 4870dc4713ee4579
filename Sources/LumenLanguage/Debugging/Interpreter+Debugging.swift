import Evaluation

/// The interpreter's side of the debugger: the places a cell may stop, and the frames it shows.
extension Interpreter {
    /// Runs `statement` as a place the cell may stop: before it (a breakpoint on its line, a
    /// step, a pause) and, when the client asked to stop on errors, where it raises one.
    func runDebugged(_ statement: Statement, in scope: Scope, context: inout RunContext) async throws -> Value {
        context.statementScope = scope
        if debugger.isArmed.load(ordering: .relaxed) {
            let thread = RunningCell.current.thread
            let line = statement.firstLine
            if thread != 0, let reason = debugger.stopReason(thread: thread, source: context.source, line: line, depth: context.depth) {
                try await debugger.stop(thread: thread, reason: reason, frames: frames(at: line, in: scope, context: context), output: context.output)
            }
        }
        do {
            return try await perform(statement, in: scope, context: &context)
        } catch var error as LumenError where !error.seenByDebugger && debugger.stopsOnErrors && RunningCell.current.thread != 0 {
            // The innermost statement the error comes from stops; the statements it passes
            // through on its way out do not stop again.
            error.seenByDebugger = true
            let description = "\(error.kind.rawValue): \(error.message)"
            let stopLine = error.location?.line ?? statement.firstLine
            try await debugger.stop(thread: RunningCell.current.thread, reason: .exception(description),
                                    frames: frames(at: stopLine, in: scope, context: context), output: context.output)
            throw error
        }
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

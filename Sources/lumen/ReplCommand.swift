import ArgumentParser
import Evaluation
import Executors
import Foundation
import LumenLanguage
import ModelBuiltins
import Terminal

/// `lumen repl [FILE]`: cells from a terminal, a pipe or a file, run by the Lumen evaluator.
struct ReplCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repl",
        abstract: "Run Lumen cells from the terminal, from stdin, or from a file.",
        discussion: """
            Interactive on a terminal: lines are edited with libedit (emacs keys, Ctrl-R searches \
            the history kept across sessions, Tab completes); Ctrl-C interrupts the running cell, \
            or clears the line; Ctrl-C twice at an empty prompt, Ctrl-D or exit quits. Otherwise each complete statement \
            group runs in order and the first error ends the run with exit status 1.
            """
    )

    @ArgumentParser.Argument(help: "A .lumen script to run instead of reading stdin.")
    var file: String?

    @Flag(help: "Keep running after a failing statement group (the exit status is still 1).")
    var keepGoing = false

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let logger = global.bootstrapLogging(label: "lumen.repl")
        let interpreter = Interpreter(libraries: ModelHost.libraries(runLog: await global.openRunLog(logger: logger), frontEnd: "repl"))
        let failed = try await runInput(interpreter: interpreter)
        await interpreter.flushRecords()
        if failed { throw ExitCode(1) }
    }

    /// Runs the file, the piped script or the interactive session; returns whether a cell failed.
    private func runInput(interpreter: Interpreter) async throws -> Bool {
        if let file {
            let source: String
            do {
                source = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw CommandError("cannot read \(file): \(error.localizedDescription)")
            }
            let lines = source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let failed = await runScript(AsyncStream { continuation in
                for line in lines { continuation.yield(.line(line)) }
                continuation.yield(.endOfInput)
                continuation.finish()
            }, path: file, interpreter: interpreter, events: nil)
            return failed
        }
        if isatty(STDIN_FILENO) != 0, let editor = LineEditor(assistant: LineEditor.Assistant(
            completeness: { await interpreter.completeness(of: $0) },
            complete: { await interpreter.complete($0, cursor: $1) }
        )) {
            await interactive(interpreter: interpreter, editor: editor)
            return false
        }
        let events = TerminalEvents()
        return await runScript(events.events, path: "<stdin>", interpreter: interpreter, events: events)
    }

    /// Runs complete statement groups as they arrive from the script at `path`; returns whether
    /// any failed. Errors name the file and its line.
    private func runScript(_ stream: AsyncStream<TerminalEvents.Event>, path: String, interpreter: Interpreter, events: TerminalEvents?) async -> Bool {
        var buffer: [String] = []
        var count = 0
        var failed = false
        // The file's lines read so far; the buffered group is the lines after `consumed` of them.
        var lineNumber = 0, consumed = 0
        func run(_ code: String) async -> Bool {
            count += 1
            return await runCell(code, count: count, file: ScriptPosition(path: path, firstLine: consumed + 1), interpreter: interpreter,
                                 routing: events?.interruptRouting, editor: nil, interactive: false)
        }
        for await event in stream {
            switch event {
            case .line(let line):
                lineNumber += 1
                buffer.append(line)
                let code = buffer.joined(separator: "\n")
                if Self.isIncomplete(await interpreter.completeness(of: code)) { continue }
                buffer = []
                defer { consumed = lineNumber }
                guard !code.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { continue }
                if Interpreter.isExitRequest(code) { return failed }
                if await !run(code) {
                    failed = true
                    if !keepGoing { return true }
                }
            case .endOfInput:
                let code = buffer.joined(separator: "\n")
                if !code.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, await !run(code) { failed = true }
                return failed
            case .interrupt:
                return true
            }
        }
        return failed
    }

    private static func isIncomplete(_ completeness: Completeness) -> Bool {
        if case .incomplete = completeness { return true }
        return false
    }

    /// The interactive session: cells read by the line editor, history kept across sessions,
    /// Ctrl-C cancelling the running cell or clearing the line.
    private func interactive(interpreter: Interpreter, editor: LineEditor) async {
        let routing = InterruptRouting()
        let signals = SignalListener(signals: [SIGINT, SIGWINCH]) { signal in
            if signal == SIGWINCH {
                editor.resized()
            } else if !routing.handle() {
                editor.interrupt()
            }
        }
        defer { signals.cancel() }
        await keepHistory(interpreter: interpreter, editor: editor)
        TerminalScreen.shared.write("Lumen \(Lumen.version). Ctrl-C interrupts, Ctrl-D or exit quits; name? shows help; Tab completes.\n")
        var count = 1
        var interruptedAtEmptyPrompt = false
        while true {
            switch await editor.readCell(prompt: "In [\(count)]: ") {
            case .endOfInput:
                TerminalScreen.shared.write("\n")
                return
            case .interrupted(let lineWasEmpty):
                if lineWasEmpty && interruptedAtEmptyPrompt { return }
                interruptedAtEmptyPrompt = lineWasEmpty
                if lineWasEmpty { TerminalScreen.shared.write("(press Ctrl-C again or Ctrl-D to quit)\n") }
            case .cell(let code):
                TerminalDisplays.cursorMovedToNewLine()
                interruptedAtEmptyPrompt = false
                guard !code.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { continue }
                await editor.remember([code])
                // Ended here, before the interpreter, so `exit` is not kept in the saved history.
                if Interpreter.isExitRequest(code) { return }
                _ = await runCell(code, count: count, interpreter: interpreter, routing: routing, editor: editor, interactive: true)
                count += 1
            }
        }
    }

    /// Opens the history store the kernel uses (off the cooperative pool), attaches it to the
    /// interpreter and gives its entries to the editor's arrows and Ctrl-R.
    private func keepHistory(interpreter: Interpreter, editor: LineEditor) async {
        do {
            let store = try await DedicatedThread.run(name: "lumen-history-open") { try HistoryStore() }
            await interpreter.attachHistory(store)
            await editor.remember(store.earlierEntries.suffix(1000).map(\.input))
        } catch {
            FileHandle.standardError.write(Data("history will not be kept: \(error)\n".utf8))
        }
    }

    /// Runs one cell in its own task, cancelled by Ctrl-C; returns whether it succeeded.
    private func runCell(_ code: String, count: Int, file: ScriptPosition? = nil, interpreter: Interpreter, routing: InterruptRouting?,
                         editor: LineEditor?, interactive: Bool) async -> Bool {
        let sink = TerminalOutputSink(executionCount: count, interactive: interactive, editor: editor)
        let cell = Task(priority: .userInitiated) { () async -> ExecutionError? in
            do throws(ExecutionError) {
                try await interpreter.execute(ExecutionRequest(code: code, executionCount: count, file: file), output: sink)
                return nil
            } catch {
                return error
            }
        }
        routing?.set {
            cell.cancel()
            return true
        }
        let failure = await cell.value
        routing?.set(nil)
        sink.finishCell()
        if let failure { sink.error(failure) }
        return failure == nil
    }
}

import ArgumentParser
import Evaluation
import Foundation
import LumenLanguage

/// `lumen repl [FILE]`: cells from a terminal, a pipe or a file, run by the Lumen evaluator.
struct ReplCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repl",
        abstract: "Run Lumen cells from the terminal, from stdin, or from a file.",
        discussion: """
            Interactive on a terminal: Ctrl-C interrupts the running cell, or clears the line; \
            Ctrl-C twice at an empty prompt, or Ctrl-D, quits. Otherwise each complete statement \
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
        let interpreter = Interpreter(runLog: await global.openRunLog(logger: logger), frontEnd: "repl")
        let failed = try await runInput(interpreter: interpreter)
        await interpreter.flushLog()
        if failed { throw ExitCode(1) }
    }

    /// Runs the file, the piped script or the interactive session; returns whether a cell failed.
    private func runInput(interpreter: Interpreter) async throws -> Bool {
        if let file {
            let source: String
            do {
                source = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw ValidationError("cannot read \(file): \(error.localizedDescription)")
            }
            let lines = source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let failed = await runScript(AsyncStream { continuation in
                for line in lines { continuation.yield(.line(line)) }
                continuation.yield(.endOfInput)
                continuation.finish()
            }, interpreter: interpreter, events: nil)
            return failed
        }
        let events = TerminalEvents()
        if isatty(STDIN_FILENO) != 0 {
            await interactive(interpreter: interpreter, events: events)
            return false
        }
        return await runScript(events.events, interpreter: interpreter, events: events)
    }

    /// Runs complete statement groups as they arrive; returns whether any failed.
    private func runScript(_ stream: AsyncStream<TerminalEvents.Event>, interpreter: Interpreter, events: TerminalEvents?) async -> Bool {
        var buffer: [String] = []
        var count = 0
        var failed = false
        for await event in stream {
            switch event {
            case .line(let line):
                buffer.append(line)
                let code = buffer.joined(separator: "\n")
                if Self.isIncomplete(await interpreter.completeness(of: code)) { continue }
                buffer = []
                guard !code.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { continue }
                count += 1
                if await !runCell(code, count: count, interpreter: interpreter, events: events, interactive: false) {
                    failed = true
                    if !keepGoing { return true }
                }
            case .endOfInput:
                let code = buffer.joined(separator: "\n")
                if !code.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                    count += 1
                    if await !runCell(code, count: count, interpreter: interpreter, events: events, interactive: false) { failed = true }
                }
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

    private func interactive(interpreter: Interpreter, events: TerminalEvents) async {
        var count = 1
        var buffer: [String] = []
        var interruptedAtEmptyPrompt = false
        func prompt() {
            let text = buffer.isEmpty ? "In [\(count)]: " : String(repeating: " ", count: "In [\(count)]".count - 3) + "...: "
            FileHandle.standardOutput.write(Data(text.utf8))
        }
        print("Lumen \(Lumen.version). Ctrl-C interrupts, Ctrl-D quits; name? shows help.")
        prompt()
        for await event in events.events {
            switch event {
            case .line(let line):
                interruptedAtEmptyPrompt = false
                buffer.append(line)
                let code = buffer.joined(separator: "\n")
                if case .incomplete = await interpreter.completeness(of: code), !line.isEmpty || buffer.count == 1 {
                    prompt()
                    continue
                }
                buffer = []
                if !code.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                    _ = await runCell(code, count: count, interpreter: interpreter, events: events, interactive: true)
                    count += 1
                }
                prompt()
            case .interrupt:
                if buffer.isEmpty && interruptedAtEmptyPrompt {
                    print("")
                    return
                }
                interruptedAtEmptyPrompt = buffer.isEmpty
                buffer = []
                print("^C" + (interruptedAtEmptyPrompt ? " (press Ctrl-C again or Ctrl-D to quit)" : ""))
                prompt()
            case .endOfInput:
                print("")
                return
            }
        }
    }

    /// Runs one cell in its own task, cancelled by Ctrl-C; returns whether it succeeded.
    private func runCell(_ code: String, count: Int, interpreter: Interpreter, events: TerminalEvents?, interactive: Bool) async -> Bool {
        let sink = TerminalOutputSink(executionCount: count, interactive: interactive, events: events)
        let cell = Task(priority: .userInitiated) { () async -> ExecutionError? in
            do throws(ExecutionError) {
                try await interpreter.execute(ExecutionRequest(code: code, executionCount: count), output: sink)
                return nil
            } catch {
                return error
            }
        }
        events?.onInterrupt {
            cell.cancel()
            return true
        }
        let failure = await cell.value
        events?.onInterrupt(nil)
        sink.finishCell()
        if let failure { sink.error(failure) }
        return failure == nil
    }
}

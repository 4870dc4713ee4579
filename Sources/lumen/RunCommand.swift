import ArgumentParser
import Executors
import Foundation
import GenerationTypes
import Inference
import LumenLanguage
import ModelBuiltins
import Notebook
import Synchronization

/// `lumen run NOTEBOOK.ipynb`: executes a notebook headlessly, for CI.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a notebook's code cells in order and save the executed notebook (for CI).",
        discussion: """
            Exit status: 0 when every cell ran, 1 at the first failing cell (the rest are not run \
            unless --allow-errors) or when --timeout ends the run, 2 for usage errors or an \
            unreadable notebook, 130 after SIGINT or SIGTERM. The output notebook is written, \
            atomically, in every case.
            """
    )

    @ArgumentParser.Argument(help: "The notebook to run.")
    var notebook: String

    @Option(name: [.customShort("o"), .customLong("output")], help: "Where to write the executed notebook (default: NAME.out.ipynb).")
    var output: String?

    @Flag(help: "Write the executed notebook over the input.")
    var inplace = false

    @Option(name: .customLong("param"), help: "NAME=VALUE, injected as `let NAME = VALUE` after the cell tagged 'parameters' (VALUE is a Lumen literal, else a string).")
    var parameters: [String] = []

    @Option(help: "Seconds the whole run may take; a run that takes longer is stopped and fails.")
    var timeout: Double?

    @Option(help: "Seconds each cell may take.")
    var cellTimeout: Double?

    @Flag(help: "Run every cell even after one fails (the exit status is still 1).")
    var allowErrors = false

    @Flag(help: "Print only errors.")
    var quiet = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard output == nil || !inplace else { throw ValidationError("use either -o or --inplace") }
        if let output, FileIdentity.same(notebook, output) {
            throw ValidationError("-o \(output) is the notebook being run; pass --inplace to replace it with the executed copy")
        }
        if let output, let directory = OutputPath.missingDirectory(of: output) {
            throw ValidationError("-o \(output): directory \(directory) does not exist")
        }
        for parameter in parameters where !parameter.contains("=") {
            throw ValidationError("--param takes NAME=VALUE, got \(parameter)")
        }
        guard (timeout ?? 1) > 0, (cellTimeout ?? 1) > 0 else { throw ValidationError("timeouts must be positive") }
    }

    func run() async throws {
        let logger = global.bootstrapLogging(label: "lumen.run")
        // SIGINT and SIGTERM cancel the run (the executed part is still written), from before the
        // notebook is read: a signal that comes before the run starts cancels it as it starts.
        let cancellation = Mutex<(requested: Bool, run: Task<(NotebookDocument, NotebookRunner.Outcome), Never>?)>((false, nil))
        let signals = SignalListener(signals: [SIGINT, SIGTERM]) { _ in
            cancellation.withLock { state in
                state.requested = true
                return state.run
            }?.cancel()
        }
        defer { signals.cancel() }
        var document: NotebookDocument
        do {
            document = try NotebookDocument(path: notebook)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(2)
        }
        injectParameters(into: &document)
        let destination = inplace ? notebook : output ?? (notebook.hasSuffix(".ipynb") ? String(notebook.dropLast(6)) : notebook) + ".out.ipynb"
        let terminal = isatty(STDERR_FILENO) != 0 && !quiet
        let started = ContinuousClock.now
        let interpreter = Interpreter(libraries: ModelHost.libraries(runLog: await global.openRunLog(logger: logger), frontEnd: "run", notebook: notebook))
        let runner = NotebookRunner(evaluator: interpreter, cellTimeout: cellTimeout.map { .milliseconds(Int($0 * 1000)) }, echo: !quiet)

        let run = Task { [document] in
            var document = document
            let outcome = await runner.run(&document, allowErrors: allowErrors) { index, count, firstLine in
                if terminal {
                    let elapsed = ContinuousClock.now - started
                    FileHandle.standardError.write(Data("\n[cell \(index)/\(count), \(Self.seconds(elapsed))] \(firstLine)\n".utf8))
                }
            }
            return (document, outcome)
        }
        if cancellation.withLock({ state in
            state.run = run
            return state.requested
        }) {
            run.cancel()
        }
        // Whether the run-level timeout fired (then the run fails, reported as a timeout).
        let deadline = timeout.map { seconds in
            Task { () -> Bool in
                do { try await Task.sleep(for: .milliseconds(Int(seconds * 1000))) } catch { return false }
                run.cancel()
                return true
            }
        }
        let (executed, outcome) = await run.value
        deadline?.cancel()
        await interpreter.flushRecords()
        var timedOut = false
        if outcome.interrupted, let deadline { timedOut = await deadline.value }
        do {
            try executed.write(to: destination)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(2)
        }
        for (cell, error) in outcome.failures where !(outcome.interrupted && error == .interrupted) {
            FileHandle.standardError.write(Data("\ncell \(cell + 1) failed: \(error.name): \(error.message)\n\(error.traceback.joined(separator: "\n"))\n".utf8))
        }
        if timedOut, let timeout {
            let place = outcome.failures.last.map { $0.error == .interrupted ? " in cell \($0.cell + 1)" : "" } ?? ""
            FileHandle.standardError.write(Data("\nrun timed out after \(String(format: "%g", timeout)) s\(place)\n".utf8))
        }
        if !quiet {
            let summary = "\(outcome.cellsRun) cells run, \(outcome.failures.count) failed, \(Self.seconds(ContinuousClock.now - started)); wrote \(destination)"
            let state = timedOut ? "timed out: " : outcome.interrupted ? "interrupted: " : ""
            FileHandle.standardError.write(Data("\n\(state)\(summary)\n".utf8))
        }
        if timedOut { throw ExitCode(1) }
        if outcome.interrupted { throw ExitCode(130) }
        if !outcome.failures.isEmpty { throw ExitCode(1) }
    }

    /// Adds a cell tagged `injected-parameters` after the cell tagged `parameters`, or first with a
    /// warning (as papermill does) when no cell has that tag.
    private func injectParameters(into document: inout NotebookDocument) {
        guard !parameters.isEmpty else { return }
        let lines = parameters.map { parameter in
            let parts = parameter.split(separator: "=", maxSplits: 1).map(String.init)
            let value = parts.count > 1 ? parts[1] : ""
            return "let \(parts[0]) = \(Self.isLiteral(value) ? value : String(reflecting: value))"
        }
        let tagged = document.cells.firstIndex { $0.tags.contains("parameters") }
        if tagged == nil {
            FileHandle.standardError.write(Data("warning: \(notebook) has no cell tagged 'parameters'; the parameters go in a cell at the top, before every cell\n".utf8))
        }
        let position = tagged.map { $0 + 1 } ?? 0
        document.cells.insert(.code(lines.joined(separator: "\n"), tags: ["injected-parameters"], id: "injected-parameters"), at: position)
    }

    /// Whether `text` is one Lumen literal: a number, a quoted string, true, false or nil.
    static func isLiteral(_ text: String) -> Bool {
        guard let tokens = try? Lexer.tokenize(text), tokens.count == 2 else {
            return text.hasPrefix("-") && isLiteral(String(text.dropFirst())) && Double(text) != nil
        }
        switch tokens[0].kind {
        case .integer, .float, .string, .keyword("true"), .keyword("false"), .keyword("nil"): return true
        default: return false
        }
    }

    static func seconds(_ duration: Duration) -> String {
        String(format: "%.1f s", duration.seconds)
    }
}

import Evaluation
import Foundation

/// Shows a cell's output in a terminal: streams as they are, rich values as their plain text,
/// errors with their traceback on stderr, the cell's value after `Out[n]:` when interactive.
struct TerminalOutputSink: OutputSink {
    let executionCount: Int
    let interactive: Bool
    /// Where typed lines come from, in the interactive REPL.
    let events: TerminalEvents?

    private func write(_ text: String, to handle: FileHandle = .standardOutput) {
        handle.write(Data(text.utf8))
    }

    private func line(_ text: String) -> String {
        text.hasSuffix("\n") ? text : text + "\n"
    }

    func stream(_ stream: StandardStream, _ text: String) {
        write(text, to: stream == .stdout ? .standardOutput : .standardError)
    }

    func display(_ bundle: MIMEBundle, displayID: String?) {
        write(line(bundle.plainText ?? ""))
    }

    func updateDisplay(_ bundle: MIMEBundle, displayID: String) {
        write(line(bundle.plainText ?? ""))
    }

    func clearOutput(wait: Bool) {}

    func executeResult(_ bundle: MIMEBundle) {
        let text = bundle.plainText ?? ""
        write(line(interactive ? "Out[\(executionCount)]: " + text : text))
    }

    func error(_ error: ExecutionError) {
        write(line(error.traceback.joined(separator: "\n")), to: .standardError)
    }

    func page(_ bundle: MIMEBundle) {
        write(line(bundle.plainText ?? ""))
    }

    func requestInput(prompt: String, password: Bool) async throws -> String {
        guard interactive, let events else {
            throw InputUnavailableError(reason: "a script's cells come from stdin or a file, so input() is only available in the interactive REPL")
        }
        write(prompt)
        return try await events.readInputLine()
    }
}

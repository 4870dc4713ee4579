import Evaluation
import Foundation
import Synchronization

/// What each display id of a cell last showed in the terminal, so a display that grows (a
/// generation streaming tokens) prints only what was added.
final class TerminalDisplays: Sendable {
    private let shown = Mutex<[String: String]>([:])
    /// Whether stdout's last write ended a line; one terminal, shared by every cell and job.
    private static let lastWriteEndedLine = Mutex(true)

    /// Records whether what was just written ended with a line break.
    func wrote(_ text: String) {
        if !text.isEmpty { Self.lastWriteEndedLine.withLock { $0 = text.hasSuffix("\n") } }
    }

    /// Whether the cursor is at the start of a line.
    var atLineStart: Bool { Self.lastWriteEndedLine.withLock { $0 } }

    /// The text to print for `text` shown under `id`: the new tail when it extends what was shown,
    /// else the whole text on a new line.
    func delta(for text: String, id: String) -> String {
        shown.withLock { shown in
            defer { shown[id] = text }
            guard let previous = shown[id] else { return text }
            if text.hasPrefix(previous) { return String(text.dropFirst(previous.count)) }
            return (previous.hasSuffix("\n") || previous.isEmpty ? "" : "\n") + text
        }
    }
}

/// Shows a cell's output in a terminal: streams as they are, rich values as their plain text,
/// errors with their traceback on stderr, the cell's value after `Out[n]:` when interactive (never in a script).
struct TerminalOutputSink: OutputSink {
    let executionCount: Int
    let interactive: Bool
    /// Where typed lines come from, in the interactive REPL.
    let events: TerminalEvents?
    /// What this cell's displays show.
    let displays = TerminalDisplays()

    private func write(_ text: String, to handle: FileHandle = .standardOutput) {
        handle.write(Data(text.utf8))
        if handle === FileHandle.standardOutput { displays.wrote(text) }
    }

    /// Ends the cell's output on a line of its own.
    func finishCell() {
        if !displays.atLineStart { write("\n") }
    }

    private func line(_ text: String) -> String {
        (displays.atLineStart ? "" : "\n") + (text.hasSuffix("\n") ? text : text + "\n")
    }

    func stream(_ stream: StandardStream, _ text: String) {
        write(text, to: stream == .stdout ? .standardOutput : .standardError)
    }

    func display(_ bundle: MIMEBundle, displayID: String?) {
        guard let displayID else {
            write(line(bundle.plainText ?? ""))
            return
        }
        write(displays.delta(for: bundle.plainText ?? "", id: displayID))
    }

    func updateDisplay(_ bundle: MIMEBundle, displayID: String) {
        write(displays.delta(for: bundle.plainText ?? "", id: displayID))
    }

    func clearOutput(wait: Bool) {}

    /// Shows a cell's value after `Out[n]:` at the interactive prompt; a script prints only what
    /// it prints, as `python script.py` does.
    func executeResult(_ bundle: MIMEBundle) {
        guard interactive else { return }
        write(line("Out[\(executionCount)]: " + (bundle.plainText ?? "")))
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

import Display
import Evaluation
import Foundation
import Synchronization

/// What each display id of a cell showed, so displays update sensibly in a terminal and in a
/// pipe. A display that grows (a generation streaming tokens) prints only what was added. Ones
/// that change otherwise (a progress bar, a table filling in) are redrawn in place on a terminal,
/// together with the displays printed after them while nothing else was; in a pipe or file each
/// is printed once, in its final state, when the cell ends.
public final class TerminalDisplays: Sendable {
    /// A display held back in a pipe.
    private struct Held {
        /// The order of first appearance.
        let order: Int
        /// Its latest text.
        var latest: String
        /// Whether it has been seen to grow, and so streams from then on.
        var streaming: Bool
        /// Whether `latest` still has to be printed when the cell ends.
        var pending: Bool
    }

    /// The displays at the bottom of a terminal, printed one after another with nothing else
    /// in between: what a redraw moves back over.
    private struct Region {
        var ids: [String] = []
        var texts: [String] = []
        /// Exactly what was written for them, from the first one's first character.
        var written = ""
    }

    /// Whether stdout is a terminal (redraw in place) rather than a pipe or file.
    let redrawsInPlace: Bool
    private let held = Mutex<[String: Held]>([:])
    /// Whether stdout's last write ended a line; one terminal, shared by every cell and job.
    private static let lastWriteEndedLine = Mutex(true)
    private static let lastWriteWasDisplay = Mutex(false)
    private static let region = Mutex(Region())

    public init(redrawsInPlace: Bool = isatty(STDOUT_FILENO) != 0) {
        self.redrawsInPlace = redrawsInPlace
    }

    /// The cursor is at the start of a new line below anything displayed (the user typed a line,
    /// or output was cleared): the displays above can no longer be redrawn in place.
    public static func cursorMovedToNewLine() {
        lastWriteEndedLine.withLock { $0 = true }
        lastWriteWasDisplay.withLock { $0 = false }
        region.withLock { $0 = Region() }
    }

    /// Records what was just written to stdout; anything but a display ends the redrawable region.
    func wrote(_ text: String, byDisplay: Bool = false) {
        guard !text.isEmpty else { return }
        Self.lastWriteEndedLine.withLock { $0 = text.hasSuffix("\n") }
        Self.lastWriteWasDisplay.withLock { $0 = byDisplay }
        if !byDisplay { Self.region.withLock { $0 = Region() } }
        // Only a redraw moves up; streamed tokens are plain text.
        let movedUp = text.contains("\u{1B}") ? text.matches(of: /\x1B\[(\d+)A/).reduce(0) { $0 + (Int($1.output.1) ?? 0) } : 0
        owned.withLock { $0.rows = max(0, $0.rows + text.count { $0 == "\n" } - movedUp) }
    }

    /// The rows of the terminal this cell's output has moved down since it started or was last
    /// cleared, and whether a `clear(wait: true)` waits for the next output.
    private let owned = Mutex((rows: 0, clearPending: false))

    /// What clears this cell's output from a terminal: back to its first row, then clear to the
    /// end of the screen (rows the terminal wrapped are not counted).
    func takeClearSequence() -> String {
        owned.withLock { owned in
            defer { owned = (0, false) }
            return "\r" + (owned.rows > 0 ? "\u{1B}[\(owned.rows)A" : "") + "\u{1B}[J"
        }
    }

    /// Clears the output when the next output arrives (`clear(wait: true)`).
    func clearWhenOutputArrives() {
        owned.withLock { $0.clearPending = true }
    }

    /// Whether a clear waits for this output; false afterwards.
    func takePendingClear() -> Bool {
        owned.withLock { owned in
            defer { owned.clearPending = false }
            return owned.clearPending
        }
    }

    /// Whether a display's text (a background job's, say) ends the current line unfinished, so
    /// printed text must start on a line of its own.
    var displayLineIsOpen: Bool { Self.lastWriteWasDisplay.withLock { $0 } && !atLineStart }

    /// Whether the cursor is at the start of a line.
    var atLineStart: Bool { Self.lastWriteEndedLine.withLock { $0 } }

    /// What to write now for display `id` showing `text`.
    func show(_ text: String, id: String) -> String {
        redrawsInPlace ? showOnTerminal(text, id: id) : showInPipe(text, id: id)
    }

    private func showOnTerminal(_ text: String, id: String) -> String {
        let newLine = atLineStart ? "" : "\n"
        return Self.region.withLock { region in
            guard let index = region.ids.firstIndex(of: id) else {
                region.written += (region.ids.isEmpty ? "" : newLine) + text
                region.ids.append(id)
                region.texts.append(text)
                return newLine + text
            }
            let previous = region.texts[index]
            region.texts[index] = text
            if index == region.ids.count - 1, text.hasPrefix(previous) {
                let added = String(text.dropFirst(previous.count))
                region.written += added
                return added
            }
            // Back to the region's first row, clear to the end of the screen, draw it anew.
            let lines = TerminalScreen.rowsAboveEnd(of: region.written, width: TerminalScreen.width)
            region.written = region.texts.joined(separator: "\n")
            return "\r" + (lines > 0 ? "\u{1B}[\(lines)A" : "") + "\u{1B}[J" + region.written
        }
    }

    private func showInPipe(_ text: String, id: String) -> String {
        let newLine = atLineStart ? "" : "\n"
        return held.withLock { held in
            guard var display = held[id] else {
                held[id] = Held(order: held.count, latest: text, streaming: false, pending: true)
                return ""
            }
            defer { held[id] = display }
            let previous = display.latest
            display.latest = text
            guard text.hasPrefix(previous), display.streaming || display.pending else {
                display.pending = true
                return ""
            }
            if display.streaming && !display.pending { return String(text.dropFirst(previous.count)) }
            // Seen to grow: it is a stream, printed from now on as it grows.
            display.streaming = true
            display.pending = false
            return newLine + text
        }
    }

    /// The final states of the displays a pipe has not shown yet, in order of first appearance.
    public func pendingFinalStates() -> [String] {
        held.withLock { held in
            defer { for id in held.keys { held[id]?.pending = false } }
            return held.values.filter(\.pending).sorted { $0.order < $1.order }.map(\.latest)
        }
    }
}

/// Shows a cell's output in a terminal: streams as they are, rich values as their plain text,
/// errors with their traceback on stderr, the cell's value after `Out[n]:` when interactive (never in a script).
public struct TerminalOutputSink: OutputSink {
    let executionCount: Int
    let interactive: Bool
    /// Where `input()` reads from, in the interactive REPL.
    let editor: LineEditor?
    /// What this cell's displays show.
    let displays = TerminalDisplays()

    /// The sink of cell `executionCount`; `interactive` in the REPL on a terminal (then the
    /// cell's value is shown after `Out[n]:`), reading `input()` through `editor` when given.
    public init(executionCount: Int, interactive: Bool, editor: LineEditor?) {
        self.executionCount = executionCount
        self.interactive = interactive
        self.editor = editor
    }

    private func write(_ text: String, to descriptor: Int32 = STDOUT_FILENO, byDisplay: Bool = false) {
        TerminalScreen.shared.write(text, to: descriptor)
        if descriptor == STDOUT_FILENO { displays.wrote(text, byDisplay: byDisplay) }
    }

    /// Prints what a pipe has held back (displays in their final state) and ends the cell's
    /// output on a line of its own.
    public func finishCell() {
        for text in displays.pendingFinalStates() { write(line(text)) }
        if !displays.atLineStart { write("\n") }
    }

    private func line(_ text: String) -> String {
        (displays.atLineStart ? "" : "\n") + (text.hasSuffix("\n") ? text : text + "\n")
    }

    /// Carries out a `clear(wait: true)` now that output arrives, before that output is laid out.
    private func clearIfWaiting() {
        if displays.takePendingClear() { clearNow() }
    }

    public func stream(_ stream: StandardStream, _ text: String) {
        clearIfWaiting()
        if stream == .stdout, displays.displayLineIsOpen { write("\n") }
        write(text, to: stream == .stdout ? STDOUT_FILENO : STDERR_FILENO)
    }

    public func display(_ bundle: MIMEBundle, displayID: String?) {
        clearIfWaiting()
        guard let displayID else {
            write(line(shown(bundle)))
            return
        }
        write(displays.show(shown(bundle), id: displayID), byDisplay: true)
    }

    public func updateDisplay(_ bundle: MIMEBundle, displayID: String) {
        clearIfWaiting()
        write(displays.show(shown(bundle), id: displayID), byDisplay: true)
    }

    /// Redrawn in place on a terminal; in a pipe or file, where stdout is the script's output,
    /// one line on stderr when it finishes (as tqdm writes its bars to stderr).
    public func progress(_ bundle: MIMEBundle, id: String, finished: Bool) {
        if displays.redrawsInPlace {
            updateDisplay(bundle, displayID: id)
        } else if finished {
            write((bundle.plainText ?? "") + "\n", to: STDERR_FILENO)
        }
    }

    /// A bundle's text as the terminal shows it: a table wider than the terminal is fitted to
    /// it, its cut cells ending in `…` (in a pipe or file, whole).
    private func shown(_ bundle: MIMEBundle) -> String {
        let text = bundle.plainText ?? ""
        guard displays.redrawsInPlace else { return text }
        let width = TerminalScreen.width
        guard text.split(separator: "\n").contains(where: { $0.count > width }), let table = Table(plainText: text) else { return text }
        return table.plainText(width: width)
    }

    /// On a terminal, erases what this cell has written (at once, or with `wait` when its next
    /// output arrives, so a redraw does not flicker); in a pipe or file nothing can be taken back.
    public func clearOutput(wait: Bool) {
        guard displays.redrawsInPlace else { return }
        if wait { displays.clearWhenOutputArrives() } else { clearNow() }
    }

    private func clearNow() {
        TerminalScreen.shared.write(displays.takeClearSequence())
        TerminalDisplays.cursorMovedToNewLine()
    }

    /// Shows a cell's value after `Out[n]:` at the interactive prompt; a script prints only what
    /// it prints, as `python script.py` does.
    /// A multi-line value starts on the line after `Out[n]:`, so its columns line up (as IPython
    /// shows a DataFrame).
    public func executeResult(_ bundle: MIMEBundle) {
        guard interactive else { return }
        clearIfWaiting()
        let text = shown(bundle)
        write(line("Out[\(executionCount)]:" + (text.contains("\n") ? "\n" : " ") + text))
    }

    public func error(_ error: ExecutionError) {
        clearIfWaiting()
        write(line(error.traceback.joined(separator: "\n")), to: STDERR_FILENO)
    }

    public func page(_ bundle: MIMEBundle) {
        clearIfWaiting()
        write(line(bundle.plainText ?? ""))
    }

    /// Reads a line typed at the terminal, not echoed for a password; an interrupt cancels it.
    public func requestInput(prompt: String, password: Bool) async throws -> String {
        guard interactive, let editor else {
            throw InputUnavailableError(reason: "a script's cells come from stdin or a file, so input() is only available in the interactive REPL")
        }
        let line = try await withTaskCancellationHandler {
            try await editor.readLine(prompt: prompt, echo: !password)
        } onCancel: {
            editor.interrupt()
        }
        TerminalDisplays.cursorMovedToNewLine()
        return line
    }
}

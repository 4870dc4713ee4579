import Foundation
import Synchronization

/// The terminal the REPL writes to, shared by its cells, their background jobs and the line
/// editor. While a prompt is being edited, output (a job's tokens or progress) is not written
/// over the line being typed: it is queued and the editor prints it above the prompt, then
/// redraws the prompt and the line as they were. Otherwise it is written at once.
public final class TerminalScreen: Sendable {
    /// The one terminal.
    public static let shared = TerminalScreen()

    private struct State {
        /// Whether a line editor is showing a prompt.
        var prompting = false
        /// Output queued while prompting, with the descriptor it goes to.
        var queued: [(text: String, descriptor: Int32)] = []
        /// How to tell the editor that output is queued.
        var wake: (@Sendable () -> Void)?
        /// The column where the last output ended (0: at the start of a line).
        var column = 0
        /// Whether the prompt was started on a new line below an unfinished line of output,
        /// so output continuing that line is written one line up.
        var promptBelowOpenLine = false
    }

    private let state = Mutex(State())

    /// Writes `text` to `descriptor` (stdout or stderr), or queues it while a prompt is edited.
    public func write(_ text: String, to descriptor: Int32 = STDOUT_FILENO) {
        guard !text.isEmpty else { return }
        let wake: (@Sendable () -> Void)? = state.withLock { state in
            if state.prompting {
                state.queued.append((text, descriptor))
                return state.wake
            }
            Self.writeAll(text, to: descriptor)
            state.column = Self.column(after: text, from: state.column)
            return nil
        }
        wake?()
    }

    /// A prompt is about to be drawn: from now on output is queued and `wake` is called when
    /// some is. Returns what to write first so the prompt starts on a line of its own. When
    /// stdout is not the terminal (piped while the prompt is on stderr), output is not held.
    func beginPrompt(wake: @escaping @Sendable () -> Void) -> String {
        guard isatty(STDOUT_FILENO) != 0 else { return "" }
        return state.withLock { state in
            state.prompting = true
            state.wake = wake
            state.promptBelowOpenLine = state.column > 0
            return state.column > 0 ? "\n" : ""
        }
    }

    /// The edited line was accepted or abandoned and the cursor is on a new line below it;
    /// output is written directly again (whatever is still queued, first).
    func endPrompt() {
        state.withLock { state in
            state.column = 0
            for (text, descriptor) in state.queued {
                Self.writeAll(text, to: descriptor)
                state.column = Self.column(after: text, from: state.column)
            }
            state.queued = []
            state.prompting = false
            state.wake = nil
            state.promptBelowOpenLine = false
        }
    }

    /// Whether output waits for the prompt to make room (checked on every key, before the line's
    /// layout is worked out).
    var hasQueuedOutput: Bool { state.withLock { !$0.queued.isEmpty } }

    /// Writes the queued output above the prompt: `rowsAbove` is how many rows of the prompt
    /// and line are above the cursor, `width` the terminal's width. Returns false when nothing
    /// was queued (the prompt need not be redrawn).
    func drainAbovePrompt(rowsAbove: Int, width: Int) -> Bool {
        state.withLock { state in
            guard !state.queued.isEmpty else { return false }
            // To the first row of the prompt, cleared to the end of the screen.
            var move = "\r" + (rowsAbove > 0 ? "\u{1B}[\(rowsAbove)A" : "") + "\u{1B}[J"
            if state.promptBelowOpenLine {
                // Back to the end of the unfinished line above.
                let column = state.column % max(width, 1)
                move += "\u{1B}[1A" + (column > 0 ? "\u{1B}[\(column)C" : "")
            }
            Self.writeAll(move, to: STDOUT_FILENO)
            for (text, descriptor) in state.queued {
                Self.writeAll(text, to: descriptor)
                state.column = Self.column(after: text, from: state.column)
            }
            state.queued = []
            state.promptBelowOpenLine = state.column > 0
            if state.promptBelowOpenLine { Self.writeAll("\n", to: STDOUT_FILENO) }
            return true
        }
    }

    /// Something other than output (a completion listing) was written below the prompt, so
    /// output no longer continues the line above it.
    public func endOpenLine() {
        state.withLock { state in
            state.column = 0
            state.promptBelowOpenLine = false
        }
    }

    /// The terminal's width in columns (80 when it cannot be asked).
    public static var width: Int {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    /// How many rows above the end of `text` its start is, once written from the start of a row
    /// of a terminal `width` columns wide: its new lines and the lines the terminal wraps (a
    /// line that exactly fills its last row leaves the cursor on that row, as terminals defer
    /// the wrap).
    static func rowsAboveEnd(of text: String, width: Int) -> Int {
        let columns = max(width, 1)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var rows = 0
        for (index, line) in lines.enumerated() {
            let lineWidth = displayWidth(of: line)
            rows += index < lines.count - 1 ? max(1, (lineWidth + columns - 1) / columns) : max(0, lineWidth - 1) / columns
        }
        return rows
    }

    /// The columns `text` takes on a terminal, escape sequences not counted.
    static func displayWidth(of text: some StringProtocol) -> Int {
        var width = 0
        var inEscape = false
        for scalar in text.unicodeScalars {
            if inEscape {
                if (0x40...0x7E).contains(scalar.value), scalar != "[" { inEscape = false }
            } else if scalar == "\u{1B}" {
                inEscape = true
            } else if scalar.value >= 0x20 {
                width += columns(of: scalar)
            }
        }
        return width
    }

    /// The columns one printable scalar takes: none for combining marks and format characters,
    /// two for East Asian wide and fullwidth characters and emoji shown as emoji, else one
    /// (as `wcwidth` counts them).
    private static func columns(of scalar: Unicode.Scalar) -> Int {
        // Printable ASCII, most of what is written, needs no property lookups.
        if scalar.value < 0x7F { return 1 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if scalar.properties.isEmojiPresentation { return 2 }
        return wideRanges.contains { $0.contains(scalar.value) } ? 2 : 1
    }

    /// The East Asian wide and fullwidth blocks (Unicode's `EastAsianWidth.txt` W and F, by
    /// block): Hangul Jamo, CJK radicals to CJK compatibility, Hangul syllables, CJK compatibility
    /// ideographs, vertical and compatibility forms, fullwidth forms, and the supplementary
    /// ideograph planes.
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
        0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60,
        0xFFE0...0xFFE6, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]

    private static func column(after text: String, from column: Int) -> Int {
        guard let lineStart = text.lastIndex(where: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else {
            return column + displayWidth(of: text)
        }
        return displayWidth(of: text[text.index(after: lineStart)...])
    }

    private static func writeAll(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }
}

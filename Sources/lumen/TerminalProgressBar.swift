import Foundation

/// A one-line progress bar on stderr, redrawn in place when stderr is a terminal and printed
/// every tenth of the way otherwise (so logs stay short).
struct TerminalProgressBar {
    /// Characters between the brackets.
    let width: Int
    private let interactive = isatty(STDERR_FILENO) == 1

    /// Shows `done` of `total` with a label such as the item just finished.
    func show(done: Int, of total: Int, label: String) {
        let filled = total == 0 ? width : width * done / total
        let line = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] \(done)/\(total) \(label)"
        if interactive {
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
        } else if total > 0, done == total || (10 * done / total) != (10 * (done - 1) / total) {
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    /// Ends the bar's line.
    func finish() {
        if interactive { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}

import Display
import Foundation

/// A `ProgressBar` on stderr for the commands: redrawn in place when stderr is a terminal, and
/// printed every tenth of the way otherwise (so logs stay short).
public struct TerminalProgressBar {
    private let interactive = isatty(STDERR_FILENO) == 1

    /// A bar on stderr.
    public init() {}

    /// Shows `done` of `total` with a label such as the item just finished.
    public func show(done: Int, of total: Int, label: String) {
        let line = ProgressBar(label: "\(done)/\(total) \(label)", fraction: total == 0 ? 1 : Double(done) / Double(total)).plainText
        if interactive {
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
        } else if total > 0, done == total || (10 * done / total) != (10 * (done - 1) / total) {
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    /// Ends the bar's line.
    public func finish() {
        if interactive { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}

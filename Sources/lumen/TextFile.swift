import Foundation

/// Text files a command reads (a chat template): blocking reads, for a thread of their own.
enum TextFile {
    /// The UTF-8 text of `path`, or an error naming it.
    static func read(_ path: String) throws(CommandError) -> String {
        do { return try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw CommandError("cannot read \(path): \(error.localizedDescription)")
        }
    }
}

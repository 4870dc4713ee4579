import Foundation

/// Checks on a path a command is about to write, made before any work so that the error names
/// what the user typed rather than a temporary file found missing at the end.
public enum OutputPath {
    /// The directory `path` would be written in, when it does not exist (or is not a directory);
    /// nil when it does.
    public static func missingDirectory(of path: String) -> String? {
        let directory = (path as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: directory.isEmpty ? "." : directory, isDirectory: &isDirectory)
        return exists && isDirectory.boolValue ? nil : directory
    }
}

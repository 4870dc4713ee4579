import Foundation

/// Which file a path names on disk: its device and inode. Two paths with the same identity are
/// the same file, however they are spelled — relative or absolute, through a symbolic link, or as
/// two hard links — so commands that write can refuse to overwrite their own input.
public struct FileIdentity: Equatable, Sendable {
    private let device: UInt64
    private let inode: UInt64

    /// The identity of the file at `path`, following symbolic links; nil when nothing is there.
    public init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }

    /// Whether `first` and `second` name the same existing file.
    public static func same(_ first: String, _ second: String) -> Bool {
        guard let identity = FileIdentity(path: first) else { return false }
        return identity == FileIdentity(path: second)
    }
}

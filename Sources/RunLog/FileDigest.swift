import Crypto
import Foundation
import GRDB

/// A model file's SHA-256, kept with the size and modification time it was computed for, so each
/// file is hashed once (again only when it changes).
struct FileDigest: Codable, FetchableRecord, PersistableRecord, Equatable {
    static let databaseTableName = "file"

    var path: String
    var size: Int64
    var modified: Double
    var sha256: String

    /// The size and modification time of the file at `path` now, or nil if it cannot be read.
    static func stamp(of path: String) -> (size: Int64, modified: Double)? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let size = attributes[.size] as? NSNumber, let modified = attributes[.modificationDate] as? Date else { return nil }
        return (size.int64Value, modified.timeIntervalSince1970)
    }

    /// Hashes the file at `path`, 4 MiB at a time; nil if it cannot be read.
    static func compute(path: String) -> FileDigest? {
        guard let stamp = stamp(of: path), let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var hasher = SHA256()
        do {
            while let chunk = try handle.read(upToCount: 4 << 20), !chunk.isEmpty {
                hasher.update(data: chunk)
            }
        } catch {
            return nil
        }
        let hex = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        return FileDigest(path: path, size: stamp.size, modified: stamp.modified, sha256: hex)
    }
}

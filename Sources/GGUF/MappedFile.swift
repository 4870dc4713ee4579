import Foundation

/// A file mapped read-only into memory. Tensors are views into it, so loading a model copies
/// nothing proportional to its weights but the matrices it interleaves (`InterleavedRows`).
///
/// Safety of `@unchecked Sendable`: the mapping is `PROT_READ` and never written through; the
/// base pointer and size are immutable; the mapping lives until `deinit`, and every view into it
/// holds a reference to this object.
public final class MappedFile: @unchecked Sendable {
    /// The file's path.
    public let path: String
    /// The mapped bytes.
    public let bytes: UnsafeRawBufferPointer

    /// Maps the file at `path`.
    public init(path: String) throws(ModelError) {
        self.path = path
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw ModelError(file: path, field: "file", reason: "cannot open: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw ModelError(file: path, field: "file", reason: "cannot stat: \(String(cString: strerror(errno)))")
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw ModelError(file: path, field: "file", reason: "is not a regular file")
        }
        let size = Int(status.st_size)
        guard size > 0 else {
            throw ModelError(file: path, field: "file", reason: "is empty")
        }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), base != MAP_FAILED else {
            throw ModelError(file: path, field: "file", reason: "cannot map: \(String(cString: strerror(errno)))")
        }
        bytes = UnsafeRawBufferPointer(start: base, count: size)
    }

    /// Drops the pages under `part` (a range of `bytes`) from the process's resident memory, so
    /// reading a file once from end to end does not keep all of it resident; touching them again
    /// reads them back from the file (or the page cache). Safe because the mapping is private and
    /// never written, so no page holds anything the file does not.
    public func evict(_ part: UnsafeRawBufferPointer) {
        guard let start = part.baseAddress, let base = bytes.baseAddress, !part.isEmpty else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let first = max(0, (start - base) / page * page)
        let end = min(bytes.count, start - base + part.count)
        madvise(UnsafeMutableRawPointer(mutating: base + first), end - first, Int32(MADV_DONTNEED))
    }

    deinit {
        if let base = bytes.baseAddress {
            munmap(UnsafeMutableRawPointer(mutating: base), bytes.count)
        }
    }
}

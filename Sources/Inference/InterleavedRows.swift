import Foundation

/// A matrix's rows copied at load into its format's eight-row layout (`RowInterleaving`), for
/// generation: llama.cpp's CPU "repack" buffer. Built once per matrix; the file's pages it was
/// made from are then dropped from the process (`MappedFile.evict`), so a session that only
/// generates keeps one copy of the weights resident.
///
/// Safety of `@unchecked Sendable`: the buffer is written once, in `init`, before the object is
/// shared, and only read afterwards; `base` and `groupBytes` are immutable, and the buffer lives
/// until `deinit`.
final class InterleavedRows: @unchecked Sendable {
    /// The first group.
    let base: UnsafeRawPointer
    /// Bytes per group of eight rows.
    let groupBytes: Int
    /// The kernels.
    let layout: RowInterleaving

    /// Interleaves the `rows` rows of `columns` weights at `rows` (`rowBytes` apart), or nil when
    /// `rows` is not a multiple of eight or the memory cannot be had.
    init?(_ layout: RowInterleaving, rows source: UnsafeRawPointer, rowBytes: Int, rows: Int, columns: Int) {
        guard rows > 0, rows % 8 == 0 else { return nil }
        let groupBytes = layout.groupBytes(columns)
        var memory: UnsafeMutableRawPointer?
        guard posix_memalign(&memory, 64, groupBytes * rows / 8) == 0, let memory else { return nil }
        layout.interleave(source, rowBytes, rows / 8, columns, memory)
        base = UnsafeRawPointer(memory)
        self.groupBytes = groupBytes
        self.layout = layout
    }

    deinit {
        free(UnsafeMutableRawPointer(mutating: base))
    }
}

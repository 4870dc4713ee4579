import CKernels
import Foundation
import GGUF

/// A matrix's rows copied at load into its format's eight-row layout (`RowInterleaving`), for
/// generation: llama.cpp's CPU "repack" buffer. Built once per matrix; the file's pages it was
/// made from are then dropped from the process (`MappedFile.evict`), so a session that only
/// generates keeps one copy of the weights resident.
///
/// Safety of `@unchecked Sendable`: the buffer is written once, in `init`, before the object is
/// shared, and only read afterwards; every stored property is immutable, and the buffer lives
/// until `deinit`.
package final class InterleavedRows: @unchecked Sendable {
    /// The first group.
    package let base: UnsafeRawPointer
    /// Bytes per group of eight rows.
    package let groupBytes: Int
    /// The layout and its product.
    package let layout: RowInterleaving
    private let blocks: Int
    private let blockBytes: Int
    /// Bytes of the whole copy.
    private let bytes: Int

    /// Interleaves the `rows` rows of `columns` weights of `type` at `source` (`rowBytes` apart),
    /// or nil when the format has no eight-row layout, `rows` is not a multiple of eight or the
    /// memory cannot be had.
    package init?(_ type: TensorType, rows source: UnsafeRawPointer, rowBytes: Int, rows: Int, columns: Int) {
        guard let layout = type.kernels?.interleaving, rows > 0, rows % 8 == 0 else { return nil }
        blocks = columns / type.layout.blockSize
        blockBytes = type.layout.blockBytes
        groupBytes = 8 * blocks * blockBytes
        let bytes = groupBytes * rows / 8
        // Populated in one call: a copy of hundreds of megabytes would otherwise take a page
        // fault per 4 KiB page it writes.
        guard let memory = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0),
              memory != MAP_FAILED else { return nil }
        lumen_interleave_rows(source, rowBytes, rows / 8, blocks, blockBytes, layout.leadingHalves, memory)
        base = UnsafeRawPointer(memory)
        self.bytes = bytes
        self.layout = layout
    }

    /// Writes the group of eight rows at `group` (a pointer into this buffer) back in the format's
    /// own layout, one row after another, to `rows` (for the prompt path's levels decoders).
    package func restore(_ group: UnsafeRawPointer, into rows: UnsafeMutableRawPointer) {
        lumen_restore_rows(group, 1, blocks, blockBytes, layout.leadingHalves, rows)
    }

    deinit {
        munmap(UnsafeMutableRawPointer(mutating: base), bytes)
    }
}

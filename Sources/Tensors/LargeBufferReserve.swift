import Synchronization
#if os(Linux)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The memory of large tensors, kept for the next large tensor when one is freed: a vocabulary-wide
/// product or log-softmax (100 MB) made again and again in a sweep then writes into pages it
/// already has, where fresh ones would be faulted in again — and on a virtual machine that reports
/// free memory to its host (this project's machines do: `page_reporting`), faulted in from the
/// host, which took 100–250 ms per 100 MB in streaks against 5–10 ms (BENCHMARKS.md, "Tensor
/// operations against NumPy"). A caching allocator as PyTorch's is, bounded: at most
/// `retainedLimit` bytes are kept, the oldest freed first.
final class LargeBufferReserve: Sendable {
    /// The reserve every tensor's memory comes from: at most 512 MiB kept.
    static let shared = LargeBufferReserve(retainedLimit: 512 << 20)
    /// The size from which a buffer is large: allocated on 2 MiB pages, faulted in across the
    /// cores, and kept when freed.
    static let largeBytes = 4 << 20
    /// The alignment of a large buffer: Linux's huge page.
    private static let hugePage = 2 << 20

    /// The most bytes kept for reuse.
    let retainedLimit: Int

    init(retainedLimit: Int) {
        self.retainedLimit = retainedLimit
    }

    /// A buffer held for reuse: where it starts and how many bytes it spans.
    ///
    /// Proof for `@unchecked Sendable`: a kept buffer belongs to no tensor; it moves between
    /// threads only through the lock, to the one taker that gets it or to `free`.
    private struct Kept: @unchecked Sendable {
        let base: UnsafeMutableRawPointer
        let bytes: Int
    }

    /// The buffers kept, oldest first, and their bytes in all: a kept buffer belongs to no
    /// tensor, and is handed to one taker or freed.
    private struct Shelf {
        var buffers: [Kept] = []
        var bytes = 0
    }

    private let shelf = Mutex(Shelf())

    /// How many bytes are kept now.
    var retainedBytes: Int { shelf.withLock { $0.bytes } }

    /// Memory for `count` floats (at least one) and how many it holds: a kept large buffer that
    /// fits without wasting more than half of it, or a new one.
    func take(_ count: Int) -> (base: UnsafeMutablePointer<Float>, capacity: Int) {
        let floats = Swift.max(count, 1), bytes = floats * MemoryLayout<Float>.stride
        guard bytes >= Self.largeBytes else { return (UnsafeMutablePointer<Float>.allocate(capacity: floats), floats) }
        let reused = shelf.withLock { shelf -> Kept? in
            let fitting = shelf.buffers.indices.filter { shelf.buffers[$0].bytes >= bytes && shelf.buffers[$0].bytes <= 2 * bytes }
            guard let best = fitting.min(by: { shelf.buffers[$0].bytes < shelf.buffers[$1].bytes }) else { return nil }
            shelf.bytes -= shelf.buffers[best].bytes
            return shelf.buffers.remove(at: best)
        }
        if let reused { return (reused.base.assumingMemoryBound(to: Float.self), reused.bytes / MemoryLayout<Float>.stride) }
        let rounded = (bytes + Self.hugePage - 1) / Self.hugePage * Self.hugePage
        var base: UnsafeMutableRawPointer?
        guard posix_memalign(&base, Self.hugePage, rounded) == 0, let base else { fatalError("out of memory for a tensor of \(count) floats") }
        Self.faultIn(base, bytes: rounded)
        return (base.bindMemory(to: Float.self, capacity: rounded / MemoryLayout<Float>.stride), rounded / MemoryLayout<Float>.stride)
    }

    /// Gives back what `take` returned: a large buffer kept (the oldest kept freed past the
    /// limit), a small one freed.
    func giveBack(_ base: UnsafeMutablePointer<Float>, capacity: Int) {
        let bytes = capacity * MemoryLayout<Float>.stride
        guard bytes >= Self.largeBytes else { return base.deallocate() }
        let freed = shelf.withLock { shelf -> [Kept] in
            shelf.buffers.append(Kept(base: UnsafeMutableRawPointer(base), bytes: bytes))
            shelf.bytes += bytes
            var freed: [Kept] = []
            while shelf.bytes > retainedLimit, !shelf.buffers.isEmpty {
                let oldest = shelf.buffers.removeFirst()
                shelf.bytes -= oldest.bytes
                freed.append(oldest)
            }
            return freed
        }
        for kept in freed { free(kept.base) }
    }

    /// Asks Linux to back a new large buffer with 2 MiB pages, as NumPy does for its large
    /// arrays (100 MB then faults in 50 pages, not 25,000, and rows far apart miss the TLB less),
    /// then faults them in across the cores, each core its own: a product split by columns would
    /// otherwise fault the same pages from both cores at once, one waiting while the other zeroes
    /// each (3 % of the vocabulary-wide product, measured). Elsewhere, nothing.
    private static func faultIn(_ base: UnsafeMutableRawPointer, bytes: Int) {
        #if os(Linux)
        _ = madvise(base, bytes, MADV_HUGEPAGE)
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        Parallel.forEachPart(of: bytes / page, work: bytes / 4) { pages in
            for index in pages { base.storeBytes(of: 0, toByteOffset: index * page, as: UInt8.self) }
        }
        #endif
    }
}

import CKernels
import Executors
import GenerationTypes
import Synchronization

/// Measures how fast the machine streams memory into the cores, the ceiling for generating with
/// models too large for the caches: every weight is read once per token.
public enum MemoryBandwidth {
    /// The best read bandwidth, in bytes per second, over `repetitions` passes of `threads`
    /// threads each reading its share of a `bytes`-byte buffer (far larger than the caches)
    /// through the same `WorkerPool` the matrix products use.
    public static func measure(threads: Int, bytes: Int = 1 << 30, repetitions: Int = 5) -> Double {
        let size = bytes / 4096 * 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 4096)
        defer { buffer.deallocate() }
        // Distinct contents on every page: a hypervisor could merge identical pages, and reads of
        // one shared page would come from the cache.
        let words = buffer.bindMemory(to: UInt64.self, capacity: size / 8)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for index in 0..<(size / 8) {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            words[index] = state
        }
        let workers = WorkerPool(threads: threads)
        defer { workers.shutdown() }
        let parts = max(1, threads)
        let checksum = Atomic<UInt64>(0)
        var best = Duration.seconds(1_000_000)
        let clock = ContinuousClock()
        for _ in 0..<max(1, repetitions) {
            let elapsed = clock.measure {
                workers.run(parts: parts) { part in
                    let start = size / 4096 * part / parts * 4096, end = size / 4096 * (part + 1) / parts * 4096
                    checksum.wrappingAdd(UInt64(lumen_read_bytes(buffer + start, end - start)), ordering: .relaxed)
                }
            }
            best = min(best, elapsed)
        }
        let seconds = best.seconds
        return Double(size) / seconds
    }
}

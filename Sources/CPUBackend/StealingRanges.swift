import Synchronization

/// Work split into one contiguous range of chunks per thread, which each thread takes from the
/// front of its own range; a thread that has finished its range takes the back half of another's
/// and goes on with that.
///
/// A matrix–vector product lasts tens of microseconds, and on a shared machine one thread is often
/// slowed for part of it, leaving the other to wait at the end (10 % of 1.1B generation, measured
/// by perf). A single shared chunk counter balances the work but makes every claim move a cache
/// line between cores, which costs more than it saves on small products (110M Q4_0 generation fell
/// from 420 to 310 tokens/s). Here a thread claims its own chunks from a counter no other thread
/// touches until one has run out of work, and taking half a range at a time keeps the number of
/// such moves logarithmic even when the work is uneven by design (causal attention).
package final class StealingRanges: Sendable {
    /// One thread's range: the next chunk at its front in the low 32 bits, the end of its range
    /// (one past its last chunk) in the high 32 bits, changed together by compare-and-swap.
    private final class Range: Sendable {
        let bounds = Atomic<UInt64>(0)
        /// Keeps the next range's counter off this one's cache line.
        private let padding: (Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0)
    }

    private let ranges: [Range]

    /// Room for `parts` threads.
    package init(parts: Int) {
        ranges = (0..<max(1, parts)).map { _ in Range() }
    }

    /// Divides `chunks` chunks between `parts` threads (at most the count given to `init`). Call
    /// before the threads start.
    package func reset(chunks: Int, parts: Int) {
        for part in 0..<parts {
            let front = UInt64(chunks * part / parts), end = UInt64(chunks * (part + 1) / parts)
            ranges[part].bounds.store(front | end << 32, ordering: .relaxed)
        }
    }

    /// Runs `body(chunk)` for `part`'s chunks; then, while any other thread has chunks left, moves
    /// the back half of its range into `part`'s and goes on from there.
    package func run(part: Int, parts: Int, _ body: (Int) -> Void) {
        let own = ranges[part]
        while true {
            while let chunk = takeFront(of: own) { body(chunk) }
            var stolen: UInt64?
            for offset in 1..<max(1, parts) where stolen == nil {
                stolen = takeBackHalf(of: ranges[(part + offset) % parts])
            }
            guard let range = stolen else { return }
            own.bounds.store(range, ordering: .releasing)
        }
    }

    /// Takes the first chunk of `range`, or nil when it is empty.
    private func takeFront(of range: Range) -> Int? {
        var current = range.bounds.load(ordering: .acquiring)
        while true {
            let first = current & 0xFFFF_FFFF, end = current >> 32
            guard first < end else { return nil }
            let (exchanged, original) = range.bounds.compareExchange(expected: current, desired: (first + 1) | end << 32,
                                                                     ordering: .acquiringAndReleasing)
            if exchanged { return Int(first) }
            current = original
        }
    }

    /// Takes the back half of `range` (at least one chunk), returned packed as the bounds are, or
    /// nil when it is empty.
    private func takeBackHalf(of range: Range) -> UInt64? {
        var current = range.bounds.load(ordering: .acquiring)
        while true {
            let first = current & 0xFFFF_FFFF, end = current >> 32
            guard first < end else { return nil }
            let middle = first + (end - first) / 2
            let (exchanged, original) = range.bounds.compareExchange(expected: current, desired: first | middle << 32,
                                                                     ordering: .acquiringAndReleasing)
            if exchanged { return middle | end << 32 }
            current = original
        }
    }
}

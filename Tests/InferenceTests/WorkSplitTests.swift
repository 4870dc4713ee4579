import Synchronization
import Testing
@testable import Inference

@Suite("Splitting work across the pool's threads")
struct WorkSplitTests {
    /// Runs `parallelChunks` over `count` items and returns how often each item was run, and by
    /// how many distinct threads. Item `i` costs work growing with `i`, as causal attention does,
    /// so the thread with the first share runs out early and must take over part of the other's.
    static func coverage(pool: MatrixMultiplier, count: Int, chunk: Int) -> (runs: [Int], threads: Int) {
        let runs = Mutex([Int](repeating: 0, count: count))
        let parts = Mutex(Set<Int>())
        pool.parallelChunks(count, chunk: chunk, work: MatrixMultiplier.parallelThreshold) { part, range in
            #expect(range.count <= chunk && range.lowerBound % chunk == 0)
            var sink = 0
            for item in range {
                for step in 0..<(item * 8) { sink &+= step ^ item }
                runs.withLock { $0[item] += 1 }
            }
            parts.withLock { _ = $0.insert(part) }
            withExtendedLifetime(sink) {}
        }
        return (runs.withLock { $0 }, parts.withLock { $0.count })
    }

    @Test("every item runs exactly once, whatever the count and chunk size, job after job",
          arguments: [(1, 1), (2, 16), (7, 2), (100, 16), (1000, 1), (1000, 64), (1013, 7)])
    func exactlyOnce(count: Int, chunk: Int) {
        let pool = MatrixMultiplier(threads: 2)
        defer { pool.shutdown() }
        for _ in 0..<20 {
            let (runs, threads) = Self.coverage(pool: pool, count: count, chunk: chunk)
            #expect(runs == [Int](repeating: 1, count: count))
            #expect(threads <= min(2, (count + chunk - 1) / chunk))
        }
    }

    @Test("work below the parallel threshold runs on the calling thread in one range")
    func smallWork() {
        let pool = MatrixMultiplier(threads: 2)
        defer { pool.shutdown() }
        let ranges = Mutex([Range<Int>]())
        pool.parallelChunks(100, chunk: 16, work: MatrixMultiplier.parallelThreshold - 1) { part, range in
            #expect(part == 0)
            ranges.withLock { $0.append(range) }
        }
        #expect(ranges.withLock { $0 } == [0..<100])
    }
}

import Testing
@testable import Tensors

/// The reserve keeps freed large buffers for the next large tensor, within its limit, and no
/// small one (each test on a reserve of its own: other tests' tensors use the shared one).
@Suite struct LargeBufferReserveTests {
    let mebibyte = 1 << 20 / MemoryLayout<Float>.stride

    @Test func aFreedLargeBufferIsTheNextOnesMemory() {
        let reserve = LargeBufferReserve(retainedLimit: 64 << 20)
        let first = reserve.take(5 * mebibyte)
        first.base.update(repeating: 1, count: 5 * mebibyte)
        reserve.giveBack(first.base, capacity: first.capacity)
        #expect(reserve.retainedBytes == first.capacity * MemoryLayout<Float>.stride)
        let second = reserve.take(5 * mebibyte - 3)
        #expect(second.base == first.base && second.capacity == first.capacity)
        #expect(reserve.retainedBytes == 0)
        reserve.giveBack(second.base, capacity: second.capacity)
    }

    @Test func aBufferTwiceTooLargeIsNotTakenAndTheLimitHolds() {
        let reserve = LargeBufferReserve(retainedLimit: 16 << 20)
        let large = reserve.take(12 * mebibyte)
        reserve.giveBack(large.base, capacity: large.capacity)
        let small = reserve.take(5 * mebibyte)
        #expect(small.base != large.base)
        reserve.giveBack(small.base, capacity: small.capacity)
        // 12 + 6 MiB given back (5 MiB rounded to whole 2 MiB pages): the oldest freed until at
        // most 16 MiB are kept.
        #expect(reserve.retainedBytes == 6 << 20)
        let again = reserve.take(12 * mebibyte)
        #expect(again.base != small.base)
        reserve.giveBack(again.base, capacity: again.capacity)
    }

    @Test func smallBuffersAreNotKept() {
        let reserve = LargeBufferReserve(retainedLimit: 64 << 20)
        let small = reserve.take(1000)
        #expect(small.capacity == 1000)
        reserve.giveBack(small.base, capacity: small.capacity)
        #expect(reserve.retainedBytes == 0)
    }

    @Test func aTensorMadeFromReusedMemoryHoldsOnlyItsOwnElements() throws {
        let ones = Tensor([Float](repeating: 1, count: 1024 * 8), shape: [1024, 8])
        let twos = Tensor([Float](repeating: 2, count: 8 * 1536), shape: [8, 1536])
        for _ in 0..<3 {
            let product = try Tensor.matmul(ones, twos)
            #expect(product.values.allSatisfy { $0 == 16 })
        }
    }
}

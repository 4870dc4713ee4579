/// The memory of a tensor's elements: written once, by the initializer's `fill`, then only read
/// until no tensor holds it; large ones taken from, and given back to, `LargeBufferReserve.shared`.
///
/// Proof for `@unchecked Sendable`: `base` is written only inside `init`, before the storage is
/// shared with any other thread; afterwards every access reads, and `deinit` runs when no tensor
/// refers to it any more.
@usableFromInline final class TensorStorage: @unchecked Sendable {
    /// The first element.
    @usableFromInline let base: UnsafeMutablePointer<Float>
    /// How many elements there are.
    @usableFromInline let count: Int
    /// How many floats the memory holds (at least `count`).
    private let capacity: Int

    /// Memory for `count` floats that `fill` writes, every one of them (it is not zeroed first: a
    /// product writes 100 MB once, not twice).
    init<Failure: Error>(count: Int, fill: (UnsafeMutableBufferPointer<Float>) throws(Failure) -> Void) throws(Failure) {
        let (base, capacity) = LargeBufferReserve.shared.take(count)
        do {
            try fill(UnsafeMutableBufferPointer(start: base, count: count))
        } catch {
            LargeBufferReserve.shared.giveBack(base, capacity: capacity)
            throw error
        }
        (self.base, self.count, self.capacity) = (base, count, capacity)
    }

    /// A copy of `values`.
    convenience init(copying values: some Collection<Float>) {
        self.init(count: values.count) { (out: UnsafeMutableBufferPointer<Float>) in
            _ = out.initialize(fromContentsOf: values)
        }
    }

    deinit {
        LargeBufferReserve.shared.giveBack(base, capacity: capacity)
    }
}

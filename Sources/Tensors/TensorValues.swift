/// A tensor's elements, last axis fastest: a read-only random-access collection of floats over
/// memory the tensor owns (shared, not copied, by the tensors made from it by reshaping), with
/// `withUnsafeBufferPointer` for kernels. `Array(values)` copies them out.
public struct TensorValues: RandomAccessCollection, Sendable, Equatable {
    @usableFromInline let storage: TensorStorage

    @usableFromInline init(_ storage: TensorStorage) {
        self.storage = storage
    }

    public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { storage.count }

    @inlinable public subscript(position: Int) -> Float {
        precondition(position >= 0 && position < storage.count, "index \(position) out of range for \(storage.count) elements")
        return storage.base[position]
    }

    /// Calls `body` with the elements' memory, valid only during the call.
    @inlinable public func withUnsafeBufferPointer<Result, Failure: Error>(_ body: (UnsafeBufferPointer<Float>) throws(Failure) -> Result) throws(Failure) -> Result {
        try body(UnsafeBufferPointer(start: storage.base, count: storage.count))
    }

    @inlinable public func withContiguousStorageIfAvailable<Result>(_ body: (UnsafeBufferPointer<Float>) throws -> Result) rethrows -> Result? {
        try body(UnsafeBufferPointer(start: storage.base, count: storage.count))
    }

    /// Equal when of one length and equal element by element (NaN unequal to itself, as for
    /// arrays, except that the same memory equals itself).
    public static func == (lhs: TensorValues, rhs: TensorValues) -> Bool {
        lhs.storage === rhs.storage || lhs.elementsEqual(rhs)
    }
}

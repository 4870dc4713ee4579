/// An n-dimensional array of floats in C order with NumPy's semantics, with a name per axis
/// ("block", "position", "width", "head", "query", "key") and, on some axes, a label per index
/// (the tokens along a position axis): activations as values, and what is computed from them.
/// A tensor of no axes is a single number.
///
/// The operations are in extensions by kind: `Tensor+Elementwise` (broadcasting arithmetic,
/// comparisons, functions), `Tensor+Reductions` (along axes, softmax), `Tensor+Shape`
/// (reshape, transpose, stack), `Tensor+Indexing`, `Tensor+Contractions` (matmul, einsum).
public struct Tensor: Sendable, Equatable {
    /// The length of each axis.
    public let shape: [Int]
    /// Each axis's name.
    public let axes: [String]
    /// Each axis's labels, one per index, or nil.
    public let labels: [[String]?]
    /// The memory of the elements.
    @usableFromInline let storage: TensorStorage

    /// The elements, last axis fastest.
    @inlinable public var values: TensorValues { TensorValues(storage) }

    /// A tensor of `storage`'s elements with `shape`, naming its axes `axes` (axis0, axis1, …
    /// when nil). The caller guarantees that the elements fill `shape` and that each labelled
    /// axis has a label per index (`labelled` checks names and labels a user gives).
    init(storage: TensorStorage, shape: [Int], axes: [String]? = nil, labels: [[String]?]? = nil) {
        precondition(shape.reduce(1, *) == storage.count, "\(storage.count) values for shape \(shape)")
        self.storage = storage
        self.shape = shape
        self.axes = axes ?? Self.defaultAxes(shape.count)
        self.labels = labels ?? shape.map { _ in nil }
    }

    /// A tensor of a copy of `values` with `shape`, its axes named `axes` (axis0, axis1, … when
    /// nil) and labelled `labels`, under the same guarantees.
    public init(_ values: some Collection<Float>, shape: [Int], axes: [String]? = nil, labels: [[String]?]? = nil) {
        self.init(storage: TensorStorage(copying: values), shape: shape, axes: axes, labels: labels)
    }

    /// A tensor of `shape` whose elements `fill` writes, every one of them, into memory that is
    /// not zeroed first (a large result's memory may be a freed tensor's, reused): what a kernel
    /// producing a tensor writes into, with no copy after.
    public init<Failure: Error>(shape: [Int], axes: [String]? = nil, labels: [[String]?]? = nil,
                                filling fill: (UnsafeMutableBufferPointer<Float>) throws(Failure) -> Void) throws(Failure) {
        self.init(storage: try TensorStorage(count: shape.reduce(1, *), fill: fill), shape: shape, axes: axes, labels: labels)
    }

    /// A tensor of no axes holding `value`.
    public init(scalar value: Float) {
        self.init([value], shape: [])
    }

    /// axis0, axis1, …: the names of axes nobody named.
    static func defaultAxes(_ rank: Int) -> [String] {
        (0..<rank).map { "axis\($0)" }
    }

    /// The number of axes.
    public var rank: Int { shape.count }

    /// The most axes a tensor has (NumPy's own limit, `NPY_MAXDIMS`): what reads a tensor axis
    /// by axis may recurse once per axis.
    public static let maximumRank = 64

    /// The number of elements.
    public var count: Int { storage.count }

    /// Equal shapes, axis names, labels and elements.
    public static func == (lhs: Tensor, rhs: Tensor) -> Bool {
        lhs.shape == rhs.shape && lhs.axes == rhs.axes && lhs.labels == rhs.labels && lhs.values == rhs.values
    }

    /// How many elements one step along each axis skips (C order).
    var strides: [Int] {
        var strides = [Int](repeating: 1, count: rank)
        for axis in stride(from: rank - 2, through: 0, by: -1) { strides[axis] = strides[axis + 1] * shape[axis + 1] }
        return strides
    }

    /// What the elements along `axis` describe at `index`: its label, or the index.
    public func label(axis: Int, index: Int) -> String {
        labels[axis]?[index] ?? String(index)
    }

    /// `axis` counted from the end when negative, as NumPy does, checked against the rank.
    public func resolvedAxis(_ axis: Int) throws(TensorError) -> Int {
        let resolved = axis < 0 ? rank + axis : axis
        guard (0..<rank).contains(resolved) else { throw .axisOutOfRange(axis, of: self) }
        return resolved
    }

    /// The same elements with the axes named `axes` and labelled `labels` (nil keeps what the
    /// tensor has); a list of names or labels that does not fit the shape is an error saying so.
    public func labelled(axes newAxes: [String]?, labels newLabels: [[String]?]?) throws(TensorError) -> Tensor {
        if let newAxes, newAxes.count != rank {
            throw TensorError("\(newAxes.count) axis names for a Tensor of \(rank) axes \(shapeText)")
        }
        if let newLabels {
            guard newLabels.count == rank else { throw TensorError("labels for \(newLabels.count) axes of a Tensor of \(rank) axes \(shapeText)") }
            for (axis, axisLabels) in newLabels.enumerated() {
                if let axisLabels, axisLabels.count != shape[axis] {
                    throw TensorError("\(axisLabels.count) labels for axis \(axis), whose length is \(shape[axis]), of a Tensor \(shapeText)")
                }
            }
        }
        return Tensor(storage: storage, shape: shape, axes: newAxes ?? axes, labels: newLabels ?? labels)
    }

    /// `[30 × 5 × 576]`, the shape as errors and summaries show it.
    public var shapeText: String {
        "[" + shape.map(String.init).joined(separator: " × ") + "]"
    }
}

/// Why a tensor operation cannot be done: the shapes that do not broadcast, the axis out of
/// range, the index out of bounds — named in `description`.
public struct TensorError: Error, CustomStringConvertible, Equatable {
    /// What went wrong, naming the shapes, axes or indices.
    public let description: String

    /// An error saying `description`.
    public init(_ description: String) {
        self.description = description
    }

    static func axisOutOfRange(_ axis: Int, of tensor: Tensor) -> TensorError {
        TensorError("axis \(axis) is out of range for a Tensor of \(tensor.rank) axes \(tensor.shapeText)")
    }

    static func notBroadcastable(_ a: [Int], _ b: [Int]) -> TensorError {
        let text = { (shape: [Int]) in "[" + shape.map(String.init).joined(separator: " × ") + "]" }
        return TensorError("shapes \(text(a)) and \(text(b)) do not broadcast: aligned from the last axis, each pair of lengths must be equal or one of them 1")
    }
}

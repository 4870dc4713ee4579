/// An n-dimensional array of floats in C order, with a name per axis ("block", "position",
/// "width", "head", "query", "key") and, on some axes, a label per index (the tokens along a
/// position axis): activations as values. A tensor of no axes is a single number.
public struct Tensor: Sendable, Equatable {
    /// The length of each axis.
    public let shape: [Int]
    /// Each axis's name.
    public let axes: [String]
    /// Each axis's labels, one per index, or nil.
    public let labels: [[String]?]
    /// The elements, last axis fastest.
    public let values: [Float]

    /// A tensor of `values` with `shape`, naming its axes `axes` (axis0, axis1, … when nil).
    public init(_ values: [Float], shape: [Int], axes: [String]? = nil, labels: [[String]?]? = nil) {
        precondition(shape.reduce(1, *) == values.count, "\(values.count) values for shape \(shape)")
        self.values = values
        self.shape = shape
        self.axes = axes ?? shape.indices.map { "axis\($0)" }
        self.labels = labels ?? shape.map { _ in nil }
    }

    /// The number of axes.
    public var rank: Int { shape.count }
    /// The elements after one index of the first axis.
    private var stride: Int { shape.dropFirst().reduce(1, *) }

    /// What the elements along `axis` describe at `index`: its label, or the index.
    public func label(axis: Int, index: Int) -> String {
        labels[axis]?[index] ?? String(index)
    }

    /// The tensor at `index` of the first axis (negative counts from the end), or nil when out
    /// of range.
    public func element(_ index: Int) -> Tensor? {
        guard let first = shape.first else { return nil }
        let resolved = index < 0 ? first + index : index
        guard (0..<first).contains(resolved) else { return nil }
        let start = resolved * stride
        return Tensor(Array(values[start..<(start + stride)]), shape: Array(shape.dropFirst()), axes: Array(axes.dropFirst()), labels: Array(labels.dropFirst()))
    }

    /// The tensor of indices `range` of the first axis, or nil when out of range.
    public func slice(_ range: Range<Int>) -> Tensor? {
        guard let first = shape.first, range.lowerBound >= 0, range.upperBound <= first else { return nil }
        return Tensor(Array(values[(range.lowerBound * stride)..<(range.upperBound * stride)]), shape: [range.count] + shape.dropFirst(),
                      axes: axes, labels: [labels[0].map { Array($0[range]) }] + labels.dropFirst())
    }

    /// What `reduced` computes.
    public enum Reduction: Sendable {
        case sum, mean, max, min
    }

    /// The reduction over `axis` (nil: all elements, giving a tensor of no axes).
    public func reduced(_ reduction: Reduction, axis: Int? = nil) -> Tensor {
        guard let axis else {
            return Tensor([Self.reduce(reduction, values[...])], shape: [])
        }
        precondition(shape.indices.contains(axis), "axis \(axis) of \(rank)")
        let outer = shape[..<axis].reduce(1, *), length = shape[axis], inner = shape[(axis + 1)...].reduce(1, *)
        var result = [Float](repeating: 0, count: outer * inner), column = [Float](repeating: 0, count: length)
        for o in 0..<outer {
            for i in 0..<inner {
                for k in 0..<length { column[k] = values[(o * length + k) * inner + i] }
                result[o * inner + i] = Self.reduce(reduction, column[...])
            }
        }
        var shape = shape, axes = axes, labels = labels
        shape.remove(at: axis)
        axes.remove(at: axis)
        labels.remove(at: axis)
        return Tensor(result, shape: shape, axes: axes, labels: labels)
    }

    private static func reduce(_ reduction: Reduction, _ values: ArraySlice<Float>) -> Float {
        switch reduction {
        case .sum: values.reduce(0, +)
        case .mean: values.isEmpty ? .nan : values.reduce(0, +) / Float(values.count)
        case .max: values.max() ?? .nan
        case .min: values.min() ?? .nan
        }
    }

    /// An elementwise operation.
    public enum Operation: Sendable {
        case add, subtract, multiply, divide

        func apply(_ a: Float, _ b: Float) -> Float {
            switch self {
            case .add: a + b
            case .subtract: a - b
            case .multiply: a * b
            case .divide: a / b
            }
        }
    }

    /// `self operation other` elementwise, NumPy's broadcasting of a trailing shape: the shorter
    /// shape must end the longer one, and repeats along the longer one's leading axes. Nil when
    /// neither shape ends the other.
    public func combined(_ operation: Operation, _ other: Tensor) -> Tensor? {
        let (long, short) = rank >= other.rank ? (self, other) : (other, self)
        guard Array(long.shape.suffix(short.rank)) == short.shape else { return nil }
        let period = short.values.count
        let result = long.values.indices.map { index in
            rank >= other.rank ? operation.apply(values[index], other.values[index % period])
                               : operation.apply(values[index % period], other.values[index])
        }
        return Tensor(result, shape: long.shape, axes: long.axes, labels: long.labels)
    }

    /// `self operation scalar`, or `scalar operation self` when `scalarFirst`, elementwise.
    public func combined(_ operation: Operation, scalar: Float, scalarFirst: Bool = false) -> Tensor {
        Tensor(values.map { scalarFirst ? operation.apply(scalar, $0) : operation.apply($0, scalar) }, shape: shape, axes: axes, labels: labels)
    }

    /// The Euclidean norm over the last axis (a number's magnitude, for a tensor of no axes).
    public func norms() -> Tensor {
        guard rank > 0 else { return Tensor(values.map(abs), shape: []) }
        let squares = combined(.multiply, self) ?? self
        let sums = squares.reduced(.sum, axis: rank - 1)
        return Tensor(sums.values.map { $0.squareRoot() }, shape: sums.shape, axes: sums.axes, labels: sums.labels)
    }

    /// The dot product of `a` and `b` over their last axis, broadcast as `combined`; nil when
    /// the shapes do not broadcast.
    public static func dot(_ a: Tensor, _ b: Tensor) -> Tensor? {
        guard a.rank > 0, b.rank > 0, let products = a.combined(.multiply, b) else { return nil }
        return products.reduced(.sum, axis: products.rank - 1)
    }

    /// The cosine similarity of `a` and `b` over their last axis, broadcast as `combined`; nil
    /// when the shapes do not broadcast.
    public static func cosine(_ a: Tensor, _ b: Tensor) -> Tensor? {
        guard let dots = dot(a, b), let lengths = a.norms().combined(.multiply, b.norms()) else { return nil }
        return dots.combined(.divide, lengths)
    }

    /// The `k` largest elements of a tensor of one axis, largest first (the lower index first
    /// among equals).
    public func top(_ k: Int) -> [(index: Int, value: Float)] {
        values.indices.sorted { values[$0] > values[$1] || (values[$0] == values[$1] && $0 < $1) }.prefix(max(0, k)).map { ($0, values[$0]) }
    }
}

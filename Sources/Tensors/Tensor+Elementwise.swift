import Foundation

/// A function of two numbers applied elementwise by `Tensor.combined`: arithmetic, powers,
/// the larger and smaller, and comparisons giving masks (1 where true, 0 where false).
public struct BinaryOperation: Sendable {
    /// The operator that writes it in Lumen (`+`, `<`), or its function's name (`maximum`).
    public let name: String
    /// Its value for one pair.
    public let apply: @Sendable (Float, Float) -> Float

    public static let add = BinaryOperation(name: "+") { $0 + $1 }
    public static let subtract = BinaryOperation(name: "-") { $0 - $1 }
    public static let multiply = BinaryOperation(name: "*") { $0 * $1 }
    public static let divide = BinaryOperation(name: "/") { $0 / $1 }
    /// Python's `%` (NumPy's `remainder`): the result has the divisor's sign.
    public static let remainder = BinaryOperation(name: "%") { a, b in
        let r = fmodf(a, b)
        return r != 0 && (r < 0) != (b < 0) ? r + b : r
    }
    public static let power = BinaryOperation(name: "pow") { powf($0, $1) }
    public static let maximum = BinaryOperation(name: "maximum") { a, b in a.isNaN || b.isNaN ? .nan : Swift.max(a, b) }
    public static let minimum = BinaryOperation(name: "minimum") { a, b in a.isNaN || b.isNaN ? .nan : Swift.min(a, b) }
    public static let less = BinaryOperation(name: "<") { $0 < $1 ? 1 : 0 }
    public static let lessOrEqual = BinaryOperation(name: "<=") { $0 <= $1 ? 1 : 0 }
    public static let greater = BinaryOperation(name: ">") { $0 > $1 ? 1 : 0 }
    public static let greaterOrEqual = BinaryOperation(name: ">=") { $0 >= $1 ? 1 : 0 }
    public static let equal = BinaryOperation(name: "==") { $0 == $1 ? 1 : 0 }
    public static let notEqual = BinaryOperation(name: "!=") { $0 != $1 ? 1 : 0 }

    /// The operations Lumen writes with an operator, by operator.
    public static let byOperator: [String: BinaryOperation] = Dictionary(
        uniqueKeysWithValues: [add, subtract, multiply, divide, remainder, less, lessOrEqual, greater, greaterOrEqual, equal, notEqual].map { ($0.name, $0) })
}

/// A function of one number applied elementwise: the one table of the math functions Lumen
/// has, for numbers and tensors alike.
public struct ElementwiseFunction: Sendable {
    /// Its name in Lumen.
    public let name: String
    /// What it computes, for its documentation.
    public let summary: String
    /// Its value for one number.
    public let apply: @Sendable (Double) -> Double

    public static let all: [ElementwiseFunction] = [
        ElementwiseFunction(name: "exp", summary: "e raised to the power.") { Foundation.exp($0) },
        ElementwiseFunction(name: "log", summary: "The natural logarithm.") { Foundation.log($0) },
        ElementwiseFunction(name: "sqrt", summary: "The square root.") { $0.squareRoot() },
        ElementwiseFunction(name: "abs", summary: "The absolute value.") { Swift.abs($0) },
        ElementwiseFunction(name: "round", summary: "The nearest whole number (halves away from zero).") { $0.rounded() },
        ElementwiseFunction(name: "tanh", summary: "The hyperbolic tangent.") { Foundation.tanh($0) },
        ElementwiseFunction(name: "sigmoid", summary: "The logistic function 1 / (1 + e^-x).") { 1 / (1 + Foundation.exp(-$0)) },
        ElementwiseFunction(name: "relu", summary: "max(x, 0).") { $0.isNaN ? $0 : Swift.max($0, 0) },
        ElementwiseFunction(name: "gelu", summary: "x·Φ(x), the exact GELU (PyTorch's default, erf-based).") { 0.5 * $0 * (1 + Foundation.erf($0 / 2.0.squareRoot())) },
    ]
}

extension Tensor {
    /// `function` of each element (computed in double precision, stored as float).
    public func mapped(_ function: ElementwiseFunction) -> Tensor {
        let apply = function.apply
        return Tensor(shape: shape, axes: axes, labels: labels) { out in
            values.withUnsafeBufferPointer { x in
                for index in x.indices { out[index] = Float(apply(Double(x[index]))) }
            }
        }
    }

    /// The shape `a` and `b` broadcast to, NumPy's rule: aligned from the last axis, each pair
    /// of lengths equal or one of them 1.
    public static func broadcastShape(_ a: [Int], _ b: [Int]) throws(TensorError) -> [Int] {
        let rank = Swift.max(a.count, b.count)
        var shape = [Int](repeating: 1, count: rank)
        for axis in 0..<rank {
            let x = axis - (rank - a.count) >= 0 ? a[axis - (rank - a.count)] : 1
            let y = axis - (rank - b.count) >= 0 ? b[axis - (rank - b.count)] : 1
            guard x == y || x == 1 || y == 1 else { throw .notBroadcastable(a, b) }
            shape[axis] = x == 1 ? y : x
        }
        return shape
    }

    /// The strides that read this tensor as if it had `target` shape: 0 along the axes it is
    /// broadcast over.
    func broadcastStrides(to target: [Int]) -> [Int] {
        let own = strides, offset = target.count - rank
        return target.indices.map { axis in
            axis < offset || shape[axis - offset] == 1 ? 0 : own[axis - offset]
        }
    }

    /// A tensor's axes without its elements: their lengths, names and labels.
    typealias Axes = (shape: [Int], names: [String], labels: [[String]?])

    /// This tensor's axes (without the last `dropping`).
    func axesDescription(dropping: Int = 0) -> Axes {
        (Array(shape.dropLast(dropping)), Array(axes.dropLast(dropping)), Array(labels.dropLast(dropping)))
    }

    /// The names and labels of a result of `shape` made from `operands`: each axis's from the
    /// first operand that spans it.
    static func axisNames(for shape: [Int], from operands: [Axes]) -> (axes: [String], labels: [[String]?]) {
        var axes = defaultAxes(shape.count), labels: [[String]?] = shape.map { _ in nil }
        for axis in shape.indices {
            let offset = { (operand: Axes) in axis - (shape.count - operand.shape.count) }
            if let source = operands.first(where: { offset($0) >= 0 && $0.shape[offset($0)] == shape[axis] }) {
                (axes[axis], labels[axis]) = (source.names[offset(source)], source.labels[offset(source)])
            }
        }
        return (axes, labels)
    }

    /// Calls `body(offsets)` for each element of `shape` in C order, with each operand's offset
    /// by its `strides` (0 on broadcast axes).
    static func forEachElement(of shape: [Int], strides: [[Int]], _ body: ([Int]) -> Void) {
        let count = shape.reduce(1, *)
        guard count > 0 else { return }
        var index = [Int](repeating: 0, count: shape.count), offsets = [Int](repeating: 0, count: strides.count)
        for _ in 0..<count {
            body(offsets)
            var axis = shape.count - 1
            while axis >= 0 {
                index[axis] += 1
                for operand in strides.indices { offsets[operand] += strides[operand][axis] }
                if index[axis] < shape[axis] { break }
                for operand in strides.indices { offsets[operand] -= strides[operand][axis] * shape[axis] }
                index[axis] = 0
                axis -= 1
            }
        }
    }

    /// `self operation other` elementwise, with NumPy's broadcasting.
    public func combined(_ operation: BinaryOperation, _ other: Tensor) throws(TensorError) -> Tensor {
        let shape = try Self.broadcastShape(self.shape, other.shape)
        let apply = operation.apply
        let names = Self.axisNames(for: shape, from: [axesDescription(), other.axesDescription()])
        return Tensor(shape: shape, axes: names.axes, labels: names.labels) { out in
            values.withUnsafeBufferPointer { x in
                other.values.withUnsafeBufferPointer { y in
                    if self.shape == other.shape {
                        for index in out.indices { out[index] = apply(x[index], y[index]) }
                    } else if other.count == 1, shape == self.shape {
                        let scalar = y[0]
                        for index in out.indices { out[index] = apply(x[index], scalar) }
                    } else if count == 1, shape == other.shape {
                        let scalar = x[0]
                        for index in out.indices { out[index] = apply(scalar, y[index]) }
                    } else {
                        Self.broadcasting(x, self, y, other, to: shape, into: out, apply)
                    }
                }
            }
        }
    }

    /// `a operation b` (their elements `x` and `y`) over `shape`, which both broadcast to, into
    /// `out`: the last axis in a tight loop.
    private static func broadcasting(_ x: UnsafeBufferPointer<Float>, _ a: Tensor, _ y: UnsafeBufferPointer<Float>, _ b: Tensor, to shape: [Int],
                                     into out: UnsafeMutableBufferPointer<Float>, _ apply: (Float, Float) -> Float) {
        guard let inner = shape.last, !out.isEmpty else {
            if out.count == 1 { out[0] = apply(x[0], y[0]) }
            return
        }
        let stridesA = a.broadcastStrides(to: shape), stridesB = b.broadcastStrides(to: shape)
        let (stepA, stepB) = (stridesA[shape.count - 1], stridesB[shape.count - 1])
        var row = 0
        forEachElement(of: Array(shape.dropLast()), strides: [Array(stridesA.dropLast()), Array(stridesB.dropLast())]) { offsets in
            let base = row * inner
            for j in 0..<inner { out[base + j] = apply(x[offsets[0] + j * stepA], y[offsets[1] + j * stepB]) }
            row += 1
        }
    }

    /// `self operation scalar`, or `scalar operation self` when `scalarFirst`, elementwise.
    public func combined(_ operation: BinaryOperation, scalar: Float, scalarFirst: Bool = false) -> Tensor {
        let apply = operation.apply
        return Tensor(shape: shape, axes: axes, labels: labels) { out in
            values.withUnsafeBufferPointer { x in
                if scalarFirst {
                    for index in x.indices { out[index] = apply(scalar, x[index]) }
                } else {
                    for index in x.indices { out[index] = apply(x[index], scalar) }
                }
            }
        }
    }

    /// NumPy's `where`: `whenTrue`'s element where `condition`'s is non-zero, else `whenFalse`'s,
    /// the three broadcast together.
    public static func choosing(_ condition: Tensor, _ whenTrue: Tensor, _ whenFalse: Tensor) throws(TensorError) -> Tensor {
        let shape = try broadcastShape(broadcastShape(condition.shape, whenTrue.shape), whenFalse.shape)
        var result: [Float] = []
        result.reserveCapacity(shape.reduce(1, *))
        forEachElement(of: shape, strides: [condition, whenTrue, whenFalse].map { $0.broadcastStrides(to: shape) }) { offsets in
            result.append(condition.values[offsets[0]] != 0 ? whenTrue.values[offsets[1]] : whenFalse.values[offsets[2]])
        }
        let names = axisNames(for: shape, from: [condition, whenTrue, whenFalse].map { $0.axesDescription() })
        return Tensor(result, shape: shape, axes: names.axes, labels: names.labels)
    }
}

import CPUBackend
import Foundation

/// What `Tensor.reduced` computes along axes, as NumPy's functions of those names (`norm` is
/// `numpy.linalg.norm`'s vector 2-norm, `variance` is `numpy.var`, `argmax`/`argmin` take one
/// axis or none).
public enum Reduction: String, CaseIterable, Sendable {
    case sum, mean, max, min, norm, variance, argmax, argmin

    /// Its value over one contiguous lane of `count` elements (sums eight at a time, in eight
    /// partial sums).
    func apply(_ lane: UnsafePointer<Float>, count: Int) -> Float {
        switch self {
        case .sum, .mean, .norm:
            var partial = SIMD8<Float>(), k = 0
            while k + 8 <= count {
                let x = UnsafeRawPointer(lane + k).loadUnaligned(as: SIMD8<Float>.self)
                partial += self == .norm ? x * x : x
                k += 8
            }
            var total = Double(partial.sum())
            for rest in k..<count { total += self == .norm ? Double(lane[rest] * lane[rest]) : Double(lane[rest]) }
            return Float(self == .mean ? (count == 0 ? .nan : total / Double(count)) : self == .norm ? total.squareRoot() : total)
        case .variance:
            guard count > 0 else { return .nan }
            var total = 0.0
            for k in 0..<count { total += Double(lane[k]) }
            let mean = total / Double(count)
            var squares = 0.0
            for k in 0..<count {
                let d = Double(lane[k]) - mean
                squares += d * d
            }
            return Float(squares / Double(count))
        case .max, .min, .argmax, .argmin:
            guard count > 0 else { return .nan }
            var best = lane[0], bestIndex = 0
            for k in 0..<count {
                let x = lane[k]
                // NaN wins, as in NumPy: the first NaN is the maximum and the minimum.
                if x.isNaN { return self == .max || self == .min ? .nan : Float(k) }
                if (self == .max || self == .argmax) ? x > best : x < best { (best, bestIndex) = (x, k) }
            }
            return self == .max || self == .min ? best : Float(bestIndex)
        }
    }

    /// Its values over `length` rows of `width` contiguous floats, `rowStride` apart, into
    /// `out[0..<width]`: a row at a time, each element of `out` one lane (what a reduction over
    /// an axis that is not the last reads in order).
    func applyRows(_ rows: UnsafePointer<Float>, length: Int, width: Int, rowStride: Int, into out: UnsafeMutablePointer<Float>) {
        guard length > 0 else { return out.initialize(repeating: .nan, count: width) }
        switch self {
        case .sum, .mean, .norm:
            out.initialize(repeating: 0, count: width)
            // Wide rows (a reduction over a leading axis) four at a time, eight lanes at a time:
            // `out`, too wide to stay in L1, is read and written once per four rows rather than
            // once per row.
            let squares = self == .norm
            var k = 0
            while width >= 2048, k + 4 <= length {
                let r0 = rows + k * rowStride, r1 = r0 + rowStride, r2 = r1 + rowStride, r3 = r2 + rowStride
                var i = 0
                while i + 8 <= width {
                    var x0 = UnsafeRawPointer(r0 + i).loadUnaligned(as: SIMD8<Float>.self)
                    var x1 = UnsafeRawPointer(r1 + i).loadUnaligned(as: SIMD8<Float>.self)
                    var x2 = UnsafeRawPointer(r2 + i).loadUnaligned(as: SIMD8<Float>.self)
                    var x3 = UnsafeRawPointer(r3 + i).loadUnaligned(as: SIMD8<Float>.self)
                    if squares { (x0, x1, x2, x3) = (x0 * x0, x1 * x1, x2 * x2, x3 * x3) }
                    let total = UnsafeRawPointer(out + i).loadUnaligned(as: SIMD8<Float>.self) + ((x0 + x1) + (x2 + x3))
                    UnsafeMutableRawPointer(out + i).storeBytes(of: total, as: SIMD8<Float>.self)
                    i += 8
                }
                for rest in i..<width {
                    out[rest] += squares ? (r0[rest] * r0[rest] + r1[rest] * r1[rest]) + (r2[rest] * r2[rest] + r3[rest] * r3[rest])
                        : (r0[rest] + r1[rest]) + (r2[rest] + r3[rest])
                }
                k += 4
            }
            for last in k..<length {
                let row = rows + last * rowStride
                for i in 0..<width { out[i] += squares ? row[i] * row[i] : row[i] }
            }
            if self == .mean { for i in 0..<width { out[i] /= Float(length) } }
            if self == .norm { for i in 0..<width { out[i] = out[i].squareRoot() } }
        case .variance:
            Reduction.mean.applyRows(rows, length: length, width: width, rowStride: rowStride, into: out)
            var squares = [Float](repeating: 0, count: width)
            for k in 0..<length {
                let row = rows + k * rowStride
                for i in 0..<width {
                    let d = row[i] - out[i]
                    squares[i] += d * d
                }
            }
            for i in 0..<width { out[i] = squares[i] / Float(length) }
        case .max, .min:
            out.update(from: rows, count: width)
            for k in 1..<Swift.max(1, length) {
                let row = rows + k * rowStride
                // NaN wins and stays, as in NumPy.
                for i in 0..<width where row[i].isNaN || (self == .max ? row[i] > out[i] : row[i] < out[i]) { out[i] = row[i] }
            }
        case .argmax, .argmin:
            var best = Array(UnsafeBufferPointer(start: rows, count: width))
            out.initialize(repeating: 0, count: width)
            for k in 1..<Swift.max(1, length) {
                let row = rows + k * rowStride
                for i in 0..<width where !best[i].isNaN && (row[i].isNaN || (self == .argmax ? row[i] > best[i] : row[i] < best[i])) {
                    (best[i], out[i]) = (row[i], Float(k))
                }
            }
        }
    }
}

extension Tensor {
    /// The `reduction` over `axes` (nil: over all, giving a tensor of no axes), the reduced
    /// axes removed or, with `keepingAxes`, kept with length 1. `argmax` and `argmin` take one
    /// axis or none (the index into the flattened elements), as NumPy's.
    public func reduced(_ reduction: Reduction, axes: [Int]? = nil, keepingAxes: Bool = false) throws(TensorError) -> Tensor {
        let chosen: [Int]
        if let axes {
            chosen = try axes.map { axis throws(TensorError) in try resolvedAxis(axis) }
            guard Set(chosen).count == chosen.count else { throw TensorError("axis repeated in \(axes) for a Tensor \(shapeText)") }
        } else {
            chosen = Array(0..<rank)
        }
        if reduction == .argmax || reduction == .argmin, chosen.count > 1, axes != nil {
            throw TensorError("\(reduction.rawValue) takes one axis or none, not \(axes ?? [])")
        }
        let kept = (0..<rank).filter { !chosen.contains($0) }
        let keptShape = kept.map { shape[$0] }, length = chosen.reduce(1) { $0 * shape[$1] }
        // One axis is read in place (row by row, or in lanes when it is the last); several are
        // moved last and joined, so each lane is contiguous.
        let result: TensorStorage
        if chosen.count == 1 {
            result = reducedAlong(chosen[0], reduction)
        } else {
            // The reduced axes moved last and joined: each lane contiguous.
            let moved = transposed(kept + chosen.sorted())
            result = moved.reducedAlong(lanes: keptShape.reduce(1, *), length: length, reduction)
        }
        if keepingAxes {
            let shape = self.shape.indices.map { chosen.contains($0) ? 1 : self.shape[$0] }
            return Tensor(storage: result, shape: shape, axes: self.axes, labels: shape.indices.map { chosen.contains($0) ? nil : labels[$0] })
        }
        return Tensor(storage: result, shape: keptShape, axes: kept.map { self.axes[$0] }, labels: kept.map { labels[$0] })
    }

    /// `reduction` along `axis`: contiguous lanes when it is the last, else row by row (the
    /// elements read in order), the work split across the cores.
    func reducedAlong(_ axis: Int, _ reduction: Reduction) -> TensorStorage {
        let outer = shape[..<axis].reduce(1, *), length = shape[axis], inner = shape[(axis + 1)...].reduce(1, *)
        if inner == 1 { return reducedAlong(lanes: outer, length: length, reduction) }
        // Columns in pieces, so a single outer index (axis 0) still splits across the cores.
        let piece = 4096, pieces = (inner + piece - 1) / piece
        // `applyRows` writes each of its `width` elements.
        return TensorStorage(count: outer * inner) { out in
            values.withUnsafeBufferPointer { x in
                guard let source = x.baseAddress, let target = out.baseAddress else { return }
                Parallel.forEachPart(of: outer * pieces, work: count) { items in
                    for item in items {
                        let o = item / pieces, first = item % pieces * piece, width = Swift.min(piece, inner - first)
                        reduction.applyRows(source + o * length * inner + first, length: length, width: width, rowStride: inner, into: target + o * inner + first)
                    }
                }
            }
        }
    }

    /// `reduction` of each of `lanes` contiguous lanes of `length` elements.
    func reducedAlong(lanes: Int, length: Int, _ reduction: Reduction) -> TensorStorage {
        TensorStorage(count: lanes) { out in
            values.withUnsafeBufferPointer { x in
                guard let source = x.baseAddress else { return }
                Parallel.forEachPart(of: lanes, work: lanes * length) { part in
                    for lane in part { out[lane] = reduction.apply(source + lane * length, count: length) }
                }
            }
        }
    }

    /// The length from which one row's softmax is split across the cores.
    static let longSoftmaxRow = 1 << 20

    /// NumPy's `x - max` then `exp`, normalised along `axis`: the probabilities of logits
    /// (`logarithmic`: their logarithms, computed without exponentiating and taking the log).
    public func softmax(axis: Int, logarithmic: Bool = false) throws(TensorError) -> Tensor {
        let axis = try resolvedAxis(axis)
        // Along the last axis each lane is contiguous, for the vectorised kernel; another axis
        // is moved last and back.
        guard axis == rank - 1 else {
            let back = Array(0..<axis) + [rank - 1] + Array(axis..<(rank - 1))
            return try movingAxisLast(axis).softmax(axis: -1, logarithmic: logarithmic).transposed(back)
        }
        let length = shape[axis], lanes = count / Swift.max(length, 1)
        // Every element is written by the kernel (no zero fill first).
        return Tensor(shape: shape, axes: axes, labels: labels) { out in
            values.withUnsafeBufferPointer { x in
                guard let input = x.baseAddress, let output = out.baseAddress else { return }
                guard lanes == 1 else {
                    Parallel.forEachPart(of: lanes, work: count * 8) { part in
                        for lane in part { Operations.softmax(input + lane * length, count: length, into: output + lane * length, logarithmic: logarithmic) }
                    }
                    return
                }
                // One row of up to a million (a vocabulary's logits) on this thread: its passes
                // take less than waking the pool twice would.
                guard length >= Self.longSoftmaxRow else { return Operations.softmax(input, count: length, into: output, logarithmic: logarithmic) }
                // A longer row: each part's log Σ e^x, joined, then each part normalised by the
                // whole row's.
                let pieces = 8
                var partial = [Float](repeating: -.infinity, count: pieces)
                partial.withUnsafeMutableBufferPointer { sums in
                    Parallel.forEachPart(of: pieces, work: length * 8) { part in
                        for piece in part where piece * length / pieces < (piece + 1) * length / pieces {
                            let start = piece * length / pieces
                            sums[piece] = Operations.logSumExp(input + start, count: (piece + 1) * length / pieces - start)
                        }
                    }
                }
                let largest = partial.max() ?? 0
                var normalizer = largest.isFinite ? largest + Float(Foundation.log(partial.reduce(0.0) { $0 + Foundation.exp(Double($1 - largest)) })) : largest
                if partial.contains(where: \.isNaN) { normalizer = .nan }
                Parallel.forEachPart(of: pieces, work: length * 8) { part in
                    for piece in part {
                        let start = piece * length / pieces
                        Operations.softmax(input + start, count: (piece + 1) * length / pieces - start, into: output + start, logarithmic: logarithmic, normalizer: &normalizer)
                    }
                }
            }
        }
    }

    /// The `k` largest elements along `axis`, largest first (the lower index first among
    /// equals): their values and their indices, each with that axis `k` long.
    public func top(_ k: Int, axis: Int = -1) throws(TensorError) -> (values: Tensor, indices: Tensor) {
        let axis = try resolvedAxis(axis)
        guard k > 0, k <= shape[axis] else { throw TensorError("k must be between 1 and \(shape[axis]), the length of axis \(axis) of a Tensor \(shapeText); got \(k)") }
        let moved = movingAxisLast(axis), length = shape[axis], lanes = count / Swift.max(length, 1)
        var topValues: [Float] = [], topIndices: [Float] = []
        topValues.reserveCapacity(lanes * k)
        topIndices.reserveCapacity(lanes * k)
        for lane in 0..<lanes {
            let start = lane * length
            let order = (0..<length).sorted { a, b in
                // NaN orders last, so the order is strict.
                let (x, y) = (moved.values[start + a], moved.values[start + b])
                let (p, q) = (x.isNaN ? -Float.infinity : x, y.isNaN ? -Float.infinity : y)
                return p > q || (p == q && a < b)
            }
            for index in order.prefix(k) {
                topValues.append(moved.values[start + index])
                topIndices.append(Float(index))
            }
        }
        var movedShape = moved.shape
        movedShape[movedShape.count - 1] = k
        let back = Array(0..<axis) + [rank - 1] + Array(axis..<(rank - 1))
        let axisLabels = moved.labels.dropLast() + [nil]
        return (Tensor(topValues, shape: movedShape, axes: moved.axes, labels: Array(axisLabels)).transposed(back),
                Tensor(topIndices, shape: movedShape, axes: moved.axes, labels: Array(axisLabels)).transposed(back))
    }

    /// The Euclidean norm over the last axis (a number's magnitude, for a tensor of no axes).
    public func norms() -> Tensor {
        guard rank > 0 else { return Tensor(values.map(abs), shape: []) }
        // The last axis of a tensor with axes always exists.
        return (try? reduced(.norm, axes: [rank - 1])) ?? self
    }

    /// The dot product of `a` and `b` over their last axis, the rest broadcast (NumPy's
    /// `vecdot`).
    public static func dot(_ a: Tensor, _ b: Tensor) throws(TensorError) -> Tensor {
        guard a.rank > 0, b.rank > 0 else { throw TensorError("dot needs Tensors of at least one axis, got \(a.shapeText) and \(b.shapeText)") }
        guard a.shape.last == b.shape.last else {
            throw TensorError("dot is over the last axis, whose lengths differ: \(a.shapeText) and \(b.shapeText)")
        }
        let products = try a.combined(.multiply, b)
        return try products.reduced(.sum, axes: [products.rank - 1])
    }

    /// The cosine similarity of `a` and `b` over their last axis, broadcast as `dot`.
    public static func cosine(_ a: Tensor, _ b: Tensor) throws(TensorError) -> Tensor {
        let dots = try dot(a, b)
        return try dots.combined(.divide, a.norms().combined(.multiply, b.norms()))
    }
}

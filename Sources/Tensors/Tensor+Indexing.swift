/// What one subscript item selects along one axis, as NumPy's basic and (one list per
/// subscript) advanced indexing.
public enum AxisIndex: Sendable, Equatable {
    /// One index (negative from the end): the axis is removed.
    case index(Int)
    /// From `lower` up to `upper` (nil: the axis's ends; negative from the end), `step` apart:
    /// the axis is kept.
    case range(lower: Int?, upper: Int?, step: Int)
    /// These indices, in this order (negative from the end): the axis is kept.
    case list([Int])
}

extension Tensor {
    /// The elements `items` select, one item per leading axis (the axes after them whole), as
    /// NumPy's `x[i, a:b, [j, k]]`. An index or range out of bounds is an error naming it and
    /// the axis's length, never clamped; at most one list, since NumPy pairs several.
    public func indexed(_ items: [AxisIndex]) throws(TensorError) -> Tensor {
        guard items.count <= rank else {
            throw TensorError("\(items.count) indices for a Tensor of \(rank) axes \(shapeText)")
        }
        guard items.filter({ if case .list = $0 { true } else { false } }).count <= 1 else {
            throw TensorError("at most one index list per subscript (NumPy would pair several); index one axis at a time")
        }
        var chosen: [[Int]] = [], keptAxes: [Int] = []
        for axis in 0..<rank {
            let length = shape[axis]
            func resolved(_ index: Int) throws(TensorError) -> Int {
                let position = index < 0 ? length + index : index
                guard (0..<length).contains(position) else {
                    throw TensorError("index \(index) is out of bounds for axis \(axis) (\(axes[axis])) of length \(length) of a Tensor \(shapeText)")
                }
                return position
            }
            switch axis < items.count ? items[axis] : .range(lower: nil, upper: nil, step: 1) {
            case .index(let index):
                chosen.append([try resolved(index)])
            case .list(let indices):
                chosen.append(try indices.map { index throws(TensorError) in try resolved(index) })
                keptAxes.append(axis)
            case .range(let lower, let upper, let step):
                guard step != 0 else { throw TensorError("a range's step cannot be 0") }
                let bound = { (value: Int?, fallback: Int) -> Int in value.map { $0 < 0 ? length + $0 : $0 } ?? fallback }
                let (start, end) = step > 0 ? (bound(lower, 0), bound(upper, length)) : (bound(lower, length - 1), bound(upper, -1))
                let inBounds = step > 0 ? (0...length).contains(start) && (0...length).contains(end) : (-1..<length).contains(start) && (-1..<length).contains(end)
                guard inBounds else {
                    throw TensorError("range \(lower.map(String.init) ?? "")..<\(upper.map(String.init) ?? "") is out of bounds for axis \(axis) (\(axes[axis])) of length \(length) of a Tensor \(shapeText)")
                }
                chosen.append(Array(Swift.stride(from: start, to: end, by: step)))
                keptAxes.append(axis)
            }
        }
        let own = strides
        var index = [Int](repeating: 0, count: rank), written = 0
        // Every element is written: one per combination of the chosen indices.
        return Tensor(shape: keptAxes.map { chosen[$0].count }, axes: keptAxes.map { axes[$0] },
                      labels: keptAxes.map { axis in labels[axis].map { axisLabels in chosen[axis].map { axisLabels[$0] } } }) { out in
            guard chosen.allSatisfy({ !$0.isEmpty }) else { return }
            values.withUnsafeBufferPointer { x in
                repeat {
                    out[written] = x[(0..<rank).reduce(0) { $0 + chosen[$1][index[$1]] * own[$1] }]
                    written += 1
                    var axis = rank - 1
                    while axis >= 0 {
                        index[axis] += 1
                        if index[axis] < chosen[axis].count { break }
                        index[axis] = 0
                        axis -= 1
                    }
                    if axis < 0 { break }
                } while true
            }
        }
    }
}

extension Tensor {
    /// The same elements in `newShape` (one length may be -1, inferred), as NumPy's `reshape`;
    /// the axes keep their names and labels where the shape keeps them.
    public func reshaped(_ newShape: [Int]) throws(TensorError) -> Tensor {
        var resolved = newShape
        let unknown = newShape.indices.filter { newShape[$0] == -1 }
        guard newShape.count <= Self.maximumRank else { throw TensorError("a Tensor has at most \(Self.maximumRank) axes, not \(newShape.count)") }
        guard unknown.count <= 1, newShape.allSatisfy({ $0 >= -1 }) else {
            throw TensorError("cannot reshape a Tensor \(shapeText) to \(newShape): lengths are 0 or more, with at most one -1")
        }
        let known = newShape.filter { $0 != -1 }.reduce(1, *)
        if let axis = unknown.first {
            guard known > 0, count % known == 0 else { throw TensorError("cannot reshape a Tensor \(shapeText) of \(count) elements to \(newShape)") }
            resolved[axis] = count / known
        }
        guard resolved.reduce(1, *) == count else {
            throw TensorError("cannot reshape a Tensor \(shapeText) of \(count) elements to \(newShape), which holds \(resolved.reduce(1, *))")
        }
        if resolved == shape { return self }
        return Tensor(storage: storage, shape: resolved)
    }

    /// The axes in the order `permutation` gives (each axis once; negative from the end), or
    /// reversed when nil, as NumPy's `transpose`.
    public func transposing(_ permutation: [Int]? = nil) throws(TensorError) -> Tensor {
        guard let permutation else { return transposed(Array((0..<rank).reversed())) }
        let resolved = try permutation.map { axis throws(TensorError) in try resolvedAxis(axis) }
        guard resolved.count == rank, Set(resolved).count == rank else {
            throw TensorError("transpose needs each of the \(rank) axes of a Tensor \(shapeText) once, got \(permutation)")
        }
        return transposed(resolved)
    }

    /// The axes in the order of `permutation`, a checked permutation of `0..<rank`: the result's
    /// rows (its last axis) copied one at a time with the source's stride, a swap of the last two
    /// axes in tiles that stay in cache.
    func transposed(_ permutation: [Int]) -> Tensor {
        if permutation == Array(0..<rank) { return self }
        let own = strides, newShape = permutation.map { shape[$0] }, sourceStrides = permutation.map { own[$0] }
        let swapsLastTwo = permutation == Array(0..<(rank - 2)) + [rank - 1, rank - 2]
        // Every element is written: each result row is a source column (or a tile of one).
        return Tensor(shape: newShape, axes: permutation.map { axes[$0] }, labels: permutation.map { labels[$0] }) { out in
            values.withUnsafeBufferPointer { x in
                guard let source = x.baseAddress, let target = out.baseAddress, let inner = newShape.last, inner > 0 else { return }
                if swapsLastTwo {
                    let (rows, columns) = (shape[rank - 2], shape[rank - 1]), matrices = count / Swift.max(1, rows * columns), tile = 32
                    let bands = (rows + tile - 1) / tile
                    Parallel.forEachPart(of: matrices * bands, work: count) { part in
                        for item in part {
                            let matrix = item / bands, row = item % bands * tile, last = Swift.min(row + tile, rows)
                            let from = source + matrix * rows * columns, to = target + matrix * rows * columns
                            for column in stride(from: 0, to: columns, by: tile) {
                                let end = Swift.min(column + tile, columns)
                                for r in row..<last {
                                    // Pointers walked with wrapping arithmetic: the bounds are the loops'.
                                    var read = from + (r &* columns &+ column), write = to + (column &* rows &+ r)
                                    for _ in column..<end {
                                        write.pointee = read.pointee
                                        read += 1
                                        write += rows
                                    }
                                }
                            }
                        }
                    }
                    return
                }
                let step = sourceStrides[rank - 1]
                var row = 0
                Self.forEachElement(of: Array(newShape.dropLast()), strides: [Array(sourceStrides.dropLast())]) { offsets in
                    let base = source + offsets[0], destination = target + row * inner
                    for j in 0..<inner { destination[j] = base[j * step] }
                    row += 1
                }
            }
        }
    }

    /// `axis` moved to the end, the others in order.
    func movingAxisLast(_ axis: Int) -> Tensor {
        transposed((0..<rank).filter { $0 != axis } + [axis])
    }

    /// Without the axes of length 1 in `axes` (nil: all of them), as NumPy's `squeeze`.
    public func squeezed(axes chosen: [Int]? = nil) throws(TensorError) -> Tensor {
        let removed: [Int]
        if let chosen {
            removed = try chosen.map { axis throws(TensorError) in try resolvedAxis(axis) }
            if let long = removed.first(where: { shape[$0] != 1 }) {
                throw TensorError("cannot squeeze axis \(long) of a Tensor \(shapeText): its length is \(shape[long]), not 1")
            }
        } else {
            removed = shape.indices.filter { shape[$0] == 1 }
        }
        let kept = shape.indices.filter { !removed.contains($0) }
        return Tensor(storage: storage, shape: kept.map { shape[$0] }, axes: kept.map { axes[$0] }, labels: kept.map { labels[$0] })
    }

    /// With a new axis of length 1 at `axis` (of the result; negative from the end), as NumPy's
    /// `expand_dims`.
    public func expanded(axis: Int) throws(TensorError) -> Tensor {
        let position = axis < 0 ? rank + 1 + axis : axis
        guard (0...rank).contains(position) else { throw .axisOutOfRange(axis, of: self) }
        guard rank < Self.maximumRank else { throw TensorError("a Tensor has at most \(Self.maximumRank) axes") }
        var newShape = shape, newAxes = axes, newLabels = labels
        newShape.insert(1, at: position)
        newAxes.insert("axis\(position)", at: position)
        newLabels.insert(nil, at: position)
        return Tensor(storage: storage, shape: newShape, axes: newAxes, labels: newLabels)
    }

    /// `tensors` (all of one shape) along a new axis at `axis`, as NumPy's `stack`.
    public static func stacked(_ tensors: [Tensor], axis: Int = 0) throws(TensorError) -> Tensor {
        guard let first = tensors.first else { throw TensorError("stack needs at least one Tensor") }
        if let other = tensors.first(where: { $0.shape != first.shape }) {
            throw TensorError("stack needs Tensors of one shape, got \(first.shapeText) and \(other.shapeText)")
        }
        let expanded = try tensors.map { tensor throws(TensorError) in try tensor.expanded(axis: axis) }
        return try concatenated(expanded, axis: axis < 0 ? first.rank + 1 + axis : axis)
    }

    /// `tensors` joined along `axis`, their other lengths equal, as NumPy's `concatenate`.
    public static func concatenated(_ tensors: [Tensor], axis: Int = 0) throws(TensorError) -> Tensor {
        guard let first = tensors.first else { throw TensorError("concat needs at least one Tensor") }
        let axis = try first.resolvedAxis(axis)
        for tensor in tensors where tensor.rank != first.rank || tensor.shape.indices.contains(where: { $0 != axis && tensor.shape[$0] != first.shape[$0] }) {
            throw TensorError("concat along axis \(axis) needs the other lengths equal, got \(first.shapeText) and \(tensor.shapeText)")
        }
        let outer = first.shape[..<axis].reduce(1, *)
        var shape = first.shape, labels = first.labels
        shape[axis] = tensors.reduce(0) { $0 + $1.shape[axis] }
        let joined = tensors.map { $0.labels[axis] }
        labels[axis] = joined.allSatisfy({ $0 != nil }) ? joined.flatMap { $0 ?? [] } : nil
        // Every element is written: each outer index takes each tensor's block in turn.
        return Tensor(shape: shape, axes: first.axes, labels: labels) { out in
            var written = 0
            for o in 0..<outer {
                for tensor in tensors {
                    let block = tensor.shape[axis...].reduce(1, *)
                    tensor.values.withUnsafeBufferPointer { x in
                        (out.baseAddress! + written).initialize(from: x.baseAddress! + o * block, count: block)
                    }
                    written += block
                }
            }
        }
    }
}

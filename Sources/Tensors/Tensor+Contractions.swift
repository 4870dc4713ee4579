import CPUBackend

extension Tensor {
    /// NumPy's `matmul`: the matrix product over the last two axes, the leading axes broadcast
    /// as a batch; a tensor of one axis is a row (first operand) or a column (second), that axis
    /// removed from the result.
    public static func matmul(_ a: Tensor, _ b: Tensor) throws(TensorError) -> Tensor {
        guard a.rank > 0, b.rank > 0 else { throw TensorError("matmul needs Tensors of at least one axis, got \(a.shapeText) and \(b.shapeText): use * for a number") }
        let left = a.rank == 1 ? try a.expanded(axis: 0) : a, right = b.rank == 1 ? try b.expanded(axis: 1) : b
        let (m, k) = (left.shape[left.rank - 2], left.shape[left.rank - 1]), (k2, n) = (right.shape[right.rank - 2], right.shape[right.rank - 1])
        guard k == k2 else {
            throw TensorError("matmul: the last axis of \(a.shapeText) (\(k)) must equal the \(b.rank == 1 ? "only" : "second-to-last") axis of \(b.shapeText) (\(k2))")
        }
        let batch: [Int]
        do {
            batch = try broadcastShape(Array(left.shape.dropLast(2)), Array(right.shape.dropLast(2)))
        } catch {
            throw TensorError("matmul: the batch axes of \(a.shapeText) and \(b.shapeText) do not broadcast")
        }
        // Each operand's step from one matrix of the batch to the next, 0 where it is broadcast.
        let stridesA = batchStrides(Array(left.shape.dropLast(2)), matrix: m * k, to: batch)
        let stridesB = batchStrides(Array(right.shape.dropLast(2)), matrix: k * n, to: batch)
        var shape = batch + [m, n]
        let names = axisNames(for: batch, from: [left.axesDescription(dropping: 2), right.axesDescription(dropping: 2)])
        var axes = names.axes + [left.axes[left.rank - 2], right.axes[right.rank - 1]]
        var labels = names.labels + [left.labels[left.rank - 2], right.labels[right.rank - 1]]
        if b.rank == 1 { shape.removeLast(); axes.removeLast(); labels.removeLast() }
        if a.rank == 1 { shape.remove(at: shape.count - (b.rank == 1 ? 1 : 2)); axes.remove(at: axes.count - (b.rank == 1 ? 1 : 2)); labels.remove(at: labels.count - (b.rank == 1 ? 1 : 2)) }
        var product = 0
        // Every element is written by `multiply` (no zero fill first: 100 MB for a vocabulary-wide product).
        return Tensor(shape: shape, axes: axes, labels: labels) { out in
            left.values.withUnsafeBufferPointer { x in
                right.values.withUnsafeBufferPointer { y in
                    forEachElement(of: batch, strides: [stridesA, stridesB]) { offsets in
                        multiply(MatrixOperand(x.baseAddress! + offsets[0], row: k, column: 1), MatrixOperand(y.baseAddress! + offsets[1], row: n, column: 1),
                                 into: out.baseAddress! + product * m * n, m: m, k: k, n: n)
                        product += 1
                    }
                }
            }
        }
    }

    /// `a · bᵀ` (NumPy's `a @ b.T`) for `a` [m][k] (or a row [k]) and `b` [n][k], reading `b`
    /// through its strides without transposing it: a row times a matrix stored row by row is then
    /// rows of dot products, the fast path, where `matmul` with `b` transposed first would copy
    /// it. The result is [m][n] (or [n]), its axes `a`'s leading one and `b`'s first.
    public static func matmulTransposed(_ a: Tensor, _ b: Tensor) throws(TensorError) -> Tensor {
        guard (1...2).contains(a.rank), b.rank == 2, a.shape[a.rank - 1] == b.shape[1] else {
            throw TensorError("matmulTransposed needs a [m][k] (or [k]) and b [n][k], got \(a.shapeText) and \(b.shapeText)")
        }
        let (m, k, n) = (a.rank == 1 ? 1 : a.shape[0], b.shape[1], b.shape[0])
        let (shape, axes, labels) = a.rank == 1 ? ([n], [b.axes[0]], [b.labels[0]]) : ([m, n], [a.axes[0], b.axes[0]], [a.labels[0], b.labels[0]])
        return Tensor(shape: shape, axes: axes, labels: labels) { out in
            a.values.withUnsafeBufferPointer { x in
                b.values.withUnsafeBufferPointer { y in
                    multiply(MatrixOperand(x.baseAddress!, row: k, column: 1), MatrixOperand(y.baseAddress!, row: 1, column: k), into: out.baseAddress!, m: m, k: k, n: n)
                }
            }
        }
    }

    /// The strides over `batch` of an operand whose leading axes are `shape`, each of its
    /// matrices `matrix` elements long.
    private static func batchStrides(_ shape: [Int], matrix: Int, to batch: [Int]) -> [Int] {
        var strides = [Int](repeating: 0, count: batch.count), step = matrix
        for axis in stride(from: shape.count - 1, through: 0, by: -1) {
            if shape[axis] != 1 { strides[axis + batch.count - shape.count] = step }
            step *= shape[axis]
        }
        return strides
    }

    /// A matrix in memory: its element (i, j) at `base[i * row + j * column]`.
    struct MatrixOperand {
        let base: UnsafePointer<Float>
        let row: Int, column: Int

        init(_ base: UnsafePointer<Float>, row: Int, column: Int) {
            self.base = base
            self.row = row
            self.column = column
        }
    }

    /// `c = a · b` for `a` [m][k], `b` [k][n] and row-major `c` [m][n], split across the cores:
    /// a matrix times a vector (either side) as rows of dot products, anything else by the packed
    /// matrix product (`lumen_matrix_product_f32`), in parts of whole register tiles along `c`'s
    /// longer side.
    static func multiply(_ a: MatrixOperand, _ b: MatrixOperand, into c: UnsafeMutablePointer<Float>, m: Int, k: Int, n: Int) {
        guard m > 0, n > 0 else { return }
        guard k > 0 else { return c.initialize(repeating: 0, count: m * n) }
        let work = m * n * k
        if n == 1, a.column == 1, b.row == 1 {
            return Parallel.forEachPart(of: m, work: work) { rows in
                FloatProducts.rowsTimesVectors(a.base + rows.lowerBound * a.row, rowStride: a.row, rows: rows.count, b.base, tokens: 1, k: k, into: c + rows.lowerBound, outStride: 1)
            }
        }
        if m == 1, a.column == 1, b.row == 1 {
            return Parallel.forEachPart(of: n, work: work) { columns in
                FloatProducts.rowsTimesVectors(b.base + columns.lowerBound * b.column, rowStride: b.column, rows: columns.count, a.base, tokens: 1, k: k, into: c + columns.lowerBound, outStride: 1)
            }
        }
        // 32 columns or 12 rows: a whole AVX-512 tile, two AVX2 ones.
        let (tileColumns, tileRows) = (32, 12)
        if n >= m {
            Parallel.forEachPart(of: (n + tileColumns - 1) / tileColumns, work: work) { tiles in
                let first = tiles.lowerBound * tileColumns, count = min(n, tiles.upperBound * tileColumns) - first
                FloatProducts.matrixProduct(m: m, n: count, k: k, a: a.base, aRow: a.row, aColumn: a.column, b: b.base + first * b.column, bRow: b.row, bColumn: b.column, c: c + first, cRow: n)
            }
        } else {
            Parallel.forEachPart(of: (m + tileRows - 1) / tileRows, work: work) { tiles in
                let first = tiles.lowerBound * tileRows, count = min(m, tiles.upperBound * tileRows) - first
                FloatProducts.matrixProduct(m: count, n: n, k: k, a: a.base + first * a.row, aRow: a.row, aColumn: a.column, b: b.base, bRow: b.row, bColumn: b.column, c: c + first * n, cRow: n)
            }
        }
    }

    /// NumPy's `outer`: every element of `a` (flattened) times every element of `b`.
    public static func outer(_ a: Tensor, _ b: Tensor) throws(TensorError) -> Tensor {
        try matmul(a.reshaped([-1, 1]), b.reshaped([1, -1]))
    }

    /// NumPy's `einsum` for one or two operands and explicit or implicit output (`"ld,vd->lv"`,
    /// `"bhqk,bkhd->bqhd"`, `"ii->i"`, `"ij"`): letters repeated within an operand take its
    /// diagonal, letters in no output are summed; each contraction of two operands is a
    /// batched `matmul`.
    public static func einsum(_ subscripts: String, _ operands: [Tensor]) throws(TensorError) -> Tensor {
        let specification = subscripts.filter { !$0.isWhitespace }
        let parts = specification.components(separatedBy: "->")
        guard parts.count <= 2 else { throw TensorError("einsum: \(subscripts.debugDescription) has more than one '->'") }
        let inputs = parts[0].split(separator: ",", omittingEmptySubsequences: false).map { Array($0) }
        guard inputs.count == operands.count, (1...2).contains(operands.count) else {
            throw TensorError("einsum: \(subscripts.debugDescription) names \(inputs.count) operands, \(operands.count) given (one or two are supported)")
        }
        for letter in inputs.joined() + (parts.count == 2 ? Array(parts[1]) : []) where !letter.isLetter {
            throw TensorError("einsum: \(String(letter).debugDescription) in \(subscripts.debugDescription) is not a letter (… is not supported)")
        }
        let output: [Character]
        if parts.count == 2 {
            output = Array(parts[1])
            guard Set(output).count == output.count else { throw TensorError("einsum: the output \(parts[1].debugDescription) repeats a letter") }
            if let missing = output.first(where: { letter in !inputs.contains { $0.contains(letter) } }) {
                throw TensorError("einsum: output letter \(String(missing).debugDescription) is in no operand of \(subscripts.debugDescription)")
            }
        } else {
            let all = inputs.joined()
            output = Set(all).filter { letter in all.filter { $0 == letter }.count == 1 }.sorted()
        }
        var sizes: [Character: Int] = [:]
        var terms: [(tensor: Tensor, letters: [Character])] = []
        for (index, (letters, tensor)) in zip(inputs, operands).enumerated() {
            guard letters.count == tensor.rank else {
                throw TensorError("einsum: operand \(index) has \(tensor.rank) axes \(tensor.shapeText) but \(String(letters).debugDescription) names \(letters.count)")
            }
            for (axis, letter) in letters.enumerated() {
                if let size = sizes[letter], size != tensor.shape[axis] {
                    throw TensorError("einsum: \(String(letter).debugDescription) is \(size) long in one place and \(tensor.shape[axis]) in another (operand \(index), axis \(axis))")
                }
                sizes[letter] = tensor.shape[axis]
            }
            terms.append(try diagonal(tensor, letters))
        }
        // Letters only one operand has and the output lacks are summed there first.
        for index in terms.indices {
            let others = Set(terms.indices.filter { $0 != index }.flatMap { terms[$0].letters })
            let summed = terms[index].letters.indices.filter { !output.contains(terms[index].letters[$0]) && !others.contains(terms[index].letters[$0]) }
            if !summed.isEmpty {
                terms[index] = (try terms[index].tensor.reduced(.sum, axes: summed), terms[index].letters.enumerated().filter { !summed.contains($0.offset) }.map(\.element))
            }
        }
        var (result, letters) = terms[0]
        if terms.count == 2 {
            (result, letters) = try contract(terms[0], terms[1], keeping: Set(output))
        }
        return result.transposed(output.map { letter in letters.firstIndex(of: letter)! })
    }

    /// The elements whose indices agree along each repeated letter, one axis per letter.
    private static func diagonal(_ tensor: Tensor, _ letters: [Character]) throws(TensorError) -> (tensor: Tensor, letters: [Character]) {
        var unique: [Character] = []
        for letter in letters where !unique.contains(letter) { unique.append(letter) }
        if unique.count == letters.count { return (tensor, letters) }
        let own = tensor.strides
        let shape = unique.map { letter in tensor.shape[letters.firstIndex(of: letter)!] }
        let strides = unique.map { letter in letters.indices.filter { letters[$0] == letter }.reduce(0) { $0 + own[$1] } }
        var result: [Float] = []
        forEachElement(of: shape, strides: [strides]) { offsets in result.append(tensor.values[offsets[0]]) }
        return (Tensor(result, shape: shape, axes: unique.map { letter in tensor.axes[letters.firstIndex(of: letter)!] }), unique)
    }

    /// `a` and `b` contracted over the letters they share that `keeping` lacks, the shared
    /// letters it has as a batch: a batched matmul of [batch][a's own][shared] by
    /// [batch][shared][b's own].
    private static func contract(_ a: (tensor: Tensor, letters: [Character]), _ b: (tensor: Tensor, letters: [Character]),
                                 keeping: Set<Character>) throws(TensorError) -> (Tensor, [Character]) {
        let shared = a.letters.filter { b.letters.contains($0) }
        let batch = shared.filter { keeping.contains($0) }, summed = shared.filter { !keeping.contains($0) }
        let ownA = a.letters.filter { !shared.contains($0) }, ownB = b.letters.filter { !shared.contains($0) }
        func arranged(_ term: (tensor: Tensor, letters: [Character]), _ order: [Character]) -> Tensor {
            term.tensor.transposed(order.map { letter in term.letters.firstIndex(of: letter)! })
        }
        let length = { (term: (tensor: Tensor, letters: [Character]), letters: [Character]) in
            letters.reduce(1) { $0 * term.tensor.shape[term.letters.firstIndex(of: $1)!] }
        }
        let (batchLength, m, k, n) = (length(a, batch), length(a, ownA), length(a, summed), length(b, ownB))
        let left = try arranged(a, batch + ownA + summed).reshaped([batchLength, m, k])
        // The right operand as [batch][its own][shared], read as [shared][its own] through its
        // strides ("ld,vd->lv" needs no copy at all).
        let right = try arranged(b, batch + ownB + summed).reshaped([batchLength, n, k])
        let shape = (batch + ownA).map { letter in a.tensor.shape[a.letters.firstIndex(of: letter)!] } + ownB.map { letter in b.tensor.shape[b.letters.firstIndex(of: letter)!] }
        let names = (batch + ownA).map { letter in a.tensor.axes[a.letters.firstIndex(of: letter)!] } + ownB.map { letter in b.tensor.axes[b.letters.firstIndex(of: letter)!] }
        let labels = (batch + ownA).map { letter in a.tensor.labels[a.letters.firstIndex(of: letter)!] } + ownB.map { letter in b.tensor.labels[b.letters.firstIndex(of: letter)!] }
        let product = Tensor(shape: shape, axes: names, labels: labels) { out in
            left.values.withUnsafeBufferPointer { x in
                right.values.withUnsafeBufferPointer { y in
                    for index in 0..<batchLength {
                        multiply(MatrixOperand(x.baseAddress! + index * m * k, row: k, column: 1), MatrixOperand(y.baseAddress! + index * n * k, row: 1, column: k),
                                 into: out.baseAddress! + index * m * n, m: m, k: k, n: n)
                    }
                }
            }
        }
        return (product, batch + ownA + ownB)
    }
}

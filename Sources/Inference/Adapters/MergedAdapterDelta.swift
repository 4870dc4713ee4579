import CPUBackend
import GGUF

/// What merging an `AdapterSet` into one weight adds to it, row by row, as `llama-export-lora`
/// computes it: for each adapter in turn, `factor × B A` (`factor` being `scale × alpha / rank`),
/// each element a dot product over the rank in F32, added to the weight widened to F32. For the
/// token embedding, llama.cpp's flipped layout: row `t` adds `factor × B a[t]`. A weight whose
/// scale multiplies its product alone (an attention projection's `.scale`, which llama.cpp's
/// `build_lora_mm` applies before adding the adapters') gets the products divided by that scale,
/// so the merged model computes what the adapters do at run time; llama-export-lora, which does
/// not, changes such models' adapted outputs by the scale. Experts' stacked weights take each
/// expert's pair (and scale) on its rows.
///
/// Built once per weight (`AdapterSet.mergedDelta(for:)`); `add(toRow:_:)` may then be called from
/// several threads at once.
public struct MergedAdapterDelta: Sendable {
    /// One adapter's product: element `[row, column]` of expert `e`'s rows is
    /// `factors[e] × left[row] · right[e][column]`.
    private struct Term: Sendable {
        /// Indexed by the weight's row: B (rows × rank), or for the embedding A (a row per token).
        let left: Matrix
        /// Each expert's (one for a two-dimensional weight), indexed by the weight's column,
        /// `rank` floats each: Aᵀ, or for the embedding B.
        let right: [[Float]]
        let rank: Int
        /// Each expert's factor: the adapter's, over the scale that multiplies the expert's product alone.
        let factors: [Float]
    }

    private let terms: [Term]
    /// The weight's row length.
    public let columns: Int
    /// Rows of each expert (all the rows for a two-dimensional weight).
    private let rowsPerExpert: Int
    /// The largest rank of the adapters: room for a row of B.
    private let largestRank: Int

    init?(terms adapterTerms: [AdapterSet.Term], embedding: Bool, productScales: [Float]) {
        guard let first = adapterTerms.first else { return nil }
        columns = embedding ? first.pair.b.rows : first.pair.a.columns
        rowsPerExpert = embedding ? first.pair.a.rows : first.pair.b.rows / first.pair.experts
        largestRank = adapterTerms.map(\.pair.rank).max() ?? 0
        terms = adapterTerms.map { term in
            let rank = term.pair.rank
            let right: [[Float]]
            if embedding {
                right = [[Float](unsafeUninitializedCapacity: term.pair.b.rows * rank) { buffer, count in
                    for row in 0..<term.pair.b.rows { term.pair.b.dequantize(row: row, into: buffer.baseAddress! + row * rank) }
                    count = term.pair.b.rows * rank
                }]
            } else {
                // Each expert's A is rank × columns; its transpose puts each column's rank values side by side.
                let columns = term.pair.a.columns
                right = (0..<term.pair.experts).map { expert in
                    let a = term.pair.a(expert: expert)
                    var row = [Float](repeating: 0, count: columns)
                    var transposed = [Float](repeating: 0, count: columns * rank)
                    for k in 0..<rank {
                        row.withUnsafeMutableBufferPointer { a.dequantize(row: k, into: $0.baseAddress!) }
                        for column in 0..<columns { transposed[column * rank + k] = row[column] }
                    }
                    return transposed
                }
            }
            let factors = (0..<right.count).map { term.factor / (productScales.count == right.count ? productScales[$0] : productScales.first ?? 1) }
            return Term(left: embedding ? term.pair.a : term.pair.b, right: right, rank: rank, factors: factors)
        }
    }

    /// Adds the adapters' products for row `row` of the weight to `values` (`columns` floats): for
    /// each adapter in turn, the product scaled, then added, in llama-export-lora's order.
    public func add(toRow row: Int, _ values: UnsafeMutablePointer<Float>) {
        withUnsafeTemporaryAllocation(of: Float.self, capacity: largestRank) { left in
            let left = left.baseAddress!
            for term in terms {
                let expert = term.right.count == 1 ? 0 : row / rowsPerExpert
                term.left.dequantize(row: row, into: left)
                term.right[expert].withUnsafeBufferPointer { right in
                    for column in 0..<columns {
                        let r = right.baseAddress! + column * term.rank
                        var sum: Float = 0
                        for k in 0..<term.rank { sum += left[k] * r[k] }
                        values[column] += sum * term.factors[expert]
                    }
                }
            }
        }
    }
}

extension AdapterSet {
    /// Whether one of these adapters adapts weight `tensor`.
    public func adapts(_ tensor: String) -> Bool { terms[tensor] != nil }

    /// What merging these adapters into weight `tensor` adds to it, or nil when none adapts it.
    public func mergedDelta(for tensor: String) -> MergedAdapterDelta? {
        terms[tensor].flatMap {
            MergedAdapterDelta(terms: $0, embedding: tensor == TensorName.tokenEmbedding.weight(), productScales: model?.adaptableTensors[tensor] ?? [1])
        }
    }
}

import CPUBackend
import GGUF

/// LoRA adapters active together, each with its scale, as a llama.cpp context holds them
/// (`--lora`, `--lora-scaled`, `llama_set_adapters_lora`): each projection an adapter adapts
/// adds `scale × alpha / rank × B(A x)` for each adapter in turn, in the order given, and the
/// token embedding adds `scale × alpha / rank × B A[token]` for an adapter of the embedding. Two
/// sets are equal when they hold the same adapters (the same loaded values) with the same scales,
/// so a cache computed under one is valid under the other.
public struct AdapterSet: Sendable, Equatable {
    /// One active adapter.
    public struct Entry: Sendable {
        public let adapter: LoRAAdapter
        public let scale: Float
    }

    /// One adapter's product for one weight: its pair and the factor it is multiplied by.
    struct Term {
        let pair: LoRAAdapter.Pair
        let factor: Float
    }

    /// The adapters, in the order they are applied.
    public let entries: [Entry]
    /// Each adapted weight's products, in the order of the entries.
    let terms: [String: [Term]]
    /// The most rows of an adapted weight (of one expert, for stacked experts), and the largest
    /// rank: a pass's room for the products.
    let widestRows: Int, largestRank: Int
    /// The model the adapters were checked against (nil for none).
    let model: LanguageModel?

    /// No adapters.
    public static let none = AdapterSet(checked: [], model: nil)

    /// `adapters` with their scales, for `model`.
    ///
    /// - Throws: `ModelError` when an adapter does not fit the model (`LoRAAdapter.check(against:)`)
    ///   or a scale is not finite.
    public init(_ adapters: [(adapter: LoRAAdapter, scale: Float)], for model: LanguageModel) throws(ModelError) {
        for (adapter, scale) in adapters {
            guard scale.isFinite else { throw ModelError(file: adapter.path, field: "scale", reason: "is \(scale), not a finite number") }
            try adapter.check(against: model)
        }
        self.init(checked: adapters.map { Entry(adapter: $0.adapter, scale: $0.scale) }, model: model)
    }

    /// The adapters in the files `files`, read (a blocking read of each file) with their scales, for `model`.
    ///
    /// - Throws: `ModelError` naming the file that cannot be read, is not an adapter or does not fit.
    public init(files: [(path: String, scale: Float)], for model: LanguageModel) throws(ModelError) {
        try self.init(try files.map { file throws(ModelError) in (try LoRAAdapter(contentsOf: file.path), file.scale) }, for: model)
    }

    private init(checked entries: [Entry], model: LanguageModel?) {
        self.entries = entries
        self.model = entries.isEmpty ? nil : model
        var terms: [String: [Term]] = [:]
        for entry in entries {
            for (weight, pair) in entry.adapter.pairs {
                terms[weight, default: []].append(Term(pair: pair, factor: entry.adapter.factor(entry.scale, rank: pair.rank)))
            }
        }
        self.terms = terms
        widestRows = terms.values.joined().map { $0.pair.b.rows / $0.pair.experts }.max() ?? 0
        largestRank = terms.values.joined().map(\.pair.rank).max() ?? 0
    }

    /// The same adapters at `scales` (one per entry, each finite), those at 0 left out, as
    /// llama.cpp leaves them out: checked against the model already, so not again.
    public func rescaled(_ scales: [Float]) -> AdapterSet {
        precondition(scales.count == entries.count && scales.allSatisfy(\.isFinite), "one finite scale per adapter")
        let kept = zip(entries, scales).filter { $0.1 != 0 }.map { Entry(adapter: $0.0.adapter, scale: $0.1) }
        return AdapterSet(checked: kept, model: model)
    }

    /// Whether no adapter is active.
    public var isEmpty: Bool { entries.isEmpty }

    /// Whether these adapters may be applied to `model`: none, or checked against it.
    func fits(_ model: LanguageModel) -> Bool { self.model.map { $0 === model } ?? true }

    /// The file of the model the adapters were checked against, for messages.
    var modelPath: String? { model?.gguf.path }

    public static func == (left: AdapterSet, right: AdapterSet) -> Bool {
        left.entries.count == right.entries.count && zip(left.entries, right.entries).allSatisfy {
            $0.adapter === $1.adapter && $0.scale.bitPattern == $1.scale.bitPattern
        }
    }

    /// Adds each adapter's products for weight `tensor` (its rows `rows`; of stacked experts,
    /// `expert`'s pair) to `count` rows of `output`, the products of the rows of `input`:
    /// llama.cpp's `B(A x)`, scaled, then added.
    func addProducts(to tensor: String, rows: Range<Int>, expert: Int, input: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>,
                     count: Int, state: InferenceState) {
        guard let terms = terms[tensor] else { return }
        let (lowRank, product) = state.adapterBuffers
        for term in terms {
            let b = rows == 0..<term.pair.b.rows ? term.pair.b : term.pair.b.rows(rows)
            state.backend.multiply(term.pair.a(expert: expert), input, into: lowRank, count: count)
            state.backend.multiply(b, lowRank, into: product, count: count)
            state.backend.scale(product, by: term.factor, count: count * rows.count)
            state.backend.add(product, to: output, count: count * rows.count)
        }
    }

    /// Starts adding weight `tensor`'s products (its rows `rows`; `expert`'s pair) to a projection of `count` tokens
    /// of `input` as the threads compute it: each adapter's `A x` now, for every token, into the
    /// room for products; the returned function then adds `B (A x)`, scaled, to the rows it is
    /// given of `output` (every token's), after scaling them by `scale` first — in the order and
    /// with the arithmetic of `addProducts` after the projection's scale, so each row is the same to
    /// the bit. Nil (nothing computed) when the products must be computed apart: a B whose product
    /// for one token is not each row's F32 dot product (a format without `addScaledDots`: 8-bit
    /// activations, eight-row layouts), or more adapters' `A x` than the room holds.
    func fusedProducts(to tensor: String, rows: Range<Int>, expert: Int, input: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>,
                       outputRows: Int, count: Int, scale: Float?, state: InferenceState) -> ((Range<Int>) -> Void)? {
        guard let terms = terms[tensor], terms.count * largestRank <= widestRows,
              terms.allSatisfy({ $0.pair.b.kernels.addScaledDots != nil }) else { return nil }
        let lowRanks = state.adapterBuffers.product
        for (index, term) in terms.enumerated() {
            state.backend.multiply(term.pair.a(expert: expert), input, into: lowRanks + index * count * largestRank, count: count)
        }
        // What the threads read, as plain values: no reference counting row by row.
        let products = terms.enumerated().compactMap { index, term in
            term.pair.b.kernels.addScaledDots.map {
                FusedProduct(rows: term.pair.b.base + rows.lowerBound * term.pair.b.rowBytes, rowBytes: term.pair.b.rowBytes,
                             addScaledDots: $0, rank: term.pair.rank, factor: term.factor, lowRanks: lowRanks + index * count * largestRank)
            }
        }
        return { range in
            products.withUnsafeBufferPointer { products in
                for token in 0..<count {
                    let row = output + token * outputRows
                    if let scale { for r in range { row[r] *= scale } }
                    for product in products {
                        product.addScaledDots(product.rows + range.lowerBound * product.rowBytes, product.rowBytes, range.count,
                                              product.lowRanks + token * product.rank, product.rank, product.factor, row + range.lowerBound)
                    }
                }
            }
        }
    }

    /// One adapter's `B (A x)` as `fusedProducts` adds it: B's rows (from the projection's first),
    /// the kernel adding their scaled dot products, and `A x` of each token.
    private struct FusedProduct {
        let rows: UnsafeRawPointer
        let rowBytes: Int
        let addScaledDots: FormatKernels.AddScaledDots
        let rank: Int
        let factor: Float
        let lowRanks: UnsafeMutablePointer<Float>
    }

    /// Adds each adapter's products for the token embedding to the embedded rows `x` of `tokens`.
    func addEmbeddingProducts(_ tokens: [Int32], to x: UnsafeMutablePointer<Float>, state: InferenceState) {
        guard let terms = terms[TensorName.tokenEmbedding.weight()] else { return }
        let (lowRank, product) = state.adapterBuffers
        for term in terms {
            let rank = term.pair.rank, width = term.pair.b.rows
            for (row, token) in tokens.enumerated() { term.pair.a.dequantize(row: Int(token), into: lowRank + row * rank) }
            state.backend.multiply(term.pair.b, lowRank, into: product, count: tokens.count)
            state.backend.scale(product, by: term.factor, count: tokens.count * width)
            state.backend.add(product, to: x, count: tokens.count * width)
        }
    }
}

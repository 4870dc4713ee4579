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

    /// Each adapter's term for weight `tensor` (its rows `rows`; `expert`'s pair) in a projection
    /// of `count` tokens of `input`, for the threads that compute the projection to add as they
    /// finish its rows (`ComputeBackend.multiplyEachToken(_:_:into:count:scale:adding:)`): each
    /// `A x` computed now, for every token, into the room for products — in the order and with the
    /// arithmetic of `addProducts` after the projection's scale, so each row is the same to the
    /// bit. Nil (nothing computed) when the products must be computed apart: a B the backend cannot
    /// add so (a format whose product for one token is not each row's F32 dot product), or more
    /// adapters' `A x` than the room holds.
    func lowRankTerms(to tensor: String, rows: Range<Int>, expert: Int, input: UnsafeMutablePointer<Float>, count: Int,
                      state: InferenceState) -> [LowRankTerm]? {
        guard let terms = terms[tensor], terms.count * largestRank <= widestRows,
              terms.allSatisfy({ state.backend.addsLowRankTerms(of: $0.pair.b) }) else { return nil }
        let room = state.adapterBuffers.product
        return terms.enumerated().map { index, term in
            let lowRanks = room + index * count * largestRank
            state.backend.multiply(term.pair.a(expert: expert), input, into: lowRanks, count: count)
            return LowRankTerm(b: term.pair.b.rows(rows), lowRanks: lowRanks, factor: term.factor)
        }
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

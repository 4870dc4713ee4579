import CPUBackend

/// A weight matrix as llama.cpp applies it: the product, times the tensor's scale when the file
/// has one (`<name>.scale`, one number, as FP8 and NVFP4 exports and llama.cpp's random-weight
/// test models carry), plus its bias when it has one (`<name>.bias`). Attention's products add
/// the bias after scaling (`build_lora_mm`, then the bias); the feed-forward's before
/// (`build_ffn`): `biasBeforeScale`. A projection llama.cpp multiplies through `build_lora_mm`
/// carries its tensor's name, and the LoRA adapters active in the pass add their low-rank
/// products where llama.cpp adds them: after the product and its scale in attention, before the
/// bias and scale in the feed-forward.
struct Projection: Sendable {
    /// What of a matrix's scale and bias an architecture's graph applies (llama.cpp's graphs pass
    /// some and leave the others, present in the file, unused: Qwen 2's feed-forward takes
    /// neither).
    struct Extras: OptionSet, Sendable {
        let rawValue: Int
        static let scale = Extras(rawValue: 1)
        static let bias = Extras(rawValue: 2)
        static let all: Extras = [.scale, .bias]
    }

    let matrix: Matrix
    var scale: Float?
    var bias: [Float]?
    /// Whether the bias is added before the scale multiplies (llama.cpp's feed-forward order).
    var biasBeforeScale = false
    /// The weight tensor's name when LoRA adapters may adapt it (`blk.3.attn_q.weight`), the rows
    /// of it this projection computes (a part of a fused tensor: Phi-3's Q/K/V; an expert's of
    /// experts' stacked weights), and which expert's it is (0 for a two-dimensional weight).
    private(set) var adapted: (tensor: String, rows: Range<Int>, expert: Int)?

    /// A projection of `matrix`; adapters may adapt it as weight `tensor` (rows `rows` of it,
    /// by default all; `expert`'s of stacked experts).
    init(_ matrix: Matrix, scale: Float? = nil, bias: [Float]? = nil, biasBeforeScale: Bool = false, adaptedAs tensor: String? = nil,
         rows: Range<Int>? = nil, expert: Int = 0) {
        self.matrix = matrix
        self.scale = scale
        self.bias = bias
        self.biasBeforeScale = biasBeforeScale
        adapted = tensor.map { ($0, rows ?? 0..<matrix.rows, expert) }
    }

    /// The projection to output rows `range` of a fused matrix (Phi-3's Q/K/V): those rows, their
    /// part of the bias, the one scale, those rows of an adapter's products.
    func rows(_ range: Range<Int>) -> Projection {
        var part = Projection(matrix.rows(range), scale: scale, bias: bias.map { Array($0[range]) }, biasBeforeScale: biasBeforeScale)
        part.adapted = adapted.map { ($0.tensor, ($0.rows.lowerBound + range.lowerBound)..<($0.rows.lowerBound + range.upperBound), $0.expert) }
        return part
    }

    /// `count` products of `input` rows into `output` rows, scaled, adapted and biased. When every
    /// row has the same adapters and the product goes a token at a time, the adapters' products
    /// are added by the threads that compute the rows, as they finish them (`AdapterSet.lowRankTerms`).
    /// `tokens` says which of the pass's rows (of `of`) the input rows are, when they are some of
    /// them (an expert's, gathered): each row gets the adapters of its own sequence.
    func apply(_ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int, state: InferenceState,
               tokens: (indices: [Int], of: Int)? = nil) {
        let runs = adapted == nil ? [] : state.adaptedRuns(count: count, tokens: tokens)
        if let adapted, runs.count == 1, runs[0].rows == 0..<count, count == 1 || state.backend.tokenByToken,
           let terms = runs[0].adapters.lowRankTerms(to: adapted.tensor, rows: adapted.rows, expert: adapted.expert, input: input, count: count,
                                                     state: state) {
            state.backend.multiplyEachToken(matrix, input, into: output, count: count, scale: biasBeforeScale ? nil : scale, adding: terms)
            if let bias { state.backend.addBias(bias, to: output, count: count) }
            if biasBeforeScale, let scale { state.backend.scale(output, by: scale, count: count * matrix.rows) }
            return
        }
        state.backend.multiply(matrix, input, into: output, count: count)
        if !biasBeforeScale, let scale { state.backend.scale(output, by: scale, count: count * matrix.rows) }
        if let adapted {
            for (adapters, rows) in runs {
                adapters.addProducts(to: adapted.tensor, rows: adapted.rows, expert: adapted.expert, input: input + rows.lowerBound * matrix.columns,
                                     output: output + rows.lowerBound * matrix.rows, count: rows.count, state: state)
            }
        }
        if let bias { state.backend.addBias(bias, to: output, count: count) }
        if biasBeforeScale, let scale { state.backend.scale(output, by: scale, count: count * matrix.rows) }
    }
}

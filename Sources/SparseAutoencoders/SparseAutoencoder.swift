import GGUF
import Inference
import Tensors

/// A sparse autoencoder (SAE) over one hook point of a model: it encodes a row of activations
/// into many sparse feature activations and decodes them back, with SAELens' formulas —
///
///     sae_in = x − b_dec (when it subtracts the decoder bias; Gemma Scope's do not)
///     pre    = sae_in · W_enc + b_enc
///     f      = ReLU(pre)                  (standard)
///            = ReLU(pre) ⊙ [pre > θ]      (JumpReLU)
///            = ReLU of the k largest of pre, 0 elsewhere  (TopK)
///     x̂      = f · W_dec + b_dec
///
/// `load(path:hook:inputScale:)` reads SAELens' and Gemma Scope's files.
public struct SparseAutoencoder: Sendable {
    /// How feature activations are made from the pre-activations.
    public enum Architecture: Sendable, Equatable, CustomStringConvertible {
        /// ReLU.
        case standard
        /// ReLU where the pre-activation is above the feature's threshold, 0 elsewhere.
        case jumpReLU
        /// ReLU of the `k` largest pre-activations of a row, 0 elsewhere (the lower index first
        /// among equals).
        case topK(Int)

        /// SAELens' name: `standard`, `jumprelu`, `topk`.
        public var name: String {
            switch self {
            case .standard: "standard"
            case .jumpReLU: "jumprelu"
            case .topK: "topk"
            }
        }

        public var description: String {
            if case .topK(let k) = self { return "topk (k = \(k))" }
            return name
        }
    }

    /// How it makes feature activations.
    public let architecture: Architecture
    /// The point it reads and writes.
    public let point: ActivationPoint
    /// The block of `point` (nil for a point the model has once, such as the embeddings).
    public let block: Int?
    /// Whether the decoder bias is subtracted from the input before encoding (SAELens'
    /// `apply_b_dec_to_input`).
    public let subtractsDecoderBias: Bool
    /// W_enc transposed, [d_sae][d_in]: row i is what feature i's pre-activation is the dot
    /// product of the input with, so encoding one row reads it row by row.
    public let encoderRows: Tensor
    /// b_enc, [d_sae].
    public let encoderBias: Tensor
    /// W_dec, [d_sae][d_in]: row i is feature i's direction.
    public let decoder: Tensor
    /// b_dec, [d_in].
    public let decoderBias: Tensor
    /// Each feature's threshold, [d_sae] (JumpReLU only).
    public let threshold: Tensor?

    /// d_in: the width of a row of activations it reads.
    public var inputWidth: Int { encoderRows.shape[1] }
    /// d_sae: how many features it has.
    public var featureCount: Int { encoderRows.shape[0] }
    /// TransformerLens's name of the hook it reads (`blocks.12.hook_resid_post`).
    public var hookName: String { point.hookName(block: block ?? 0) ?? point.rawValue }

    /// An SAE of these weights, read from `source` (named in errors): W_enc [d_in][d_sae], b_enc
    /// [d_sae], W_dec [d_sae][d_in], b_dec [d_in], and for JumpReLU a threshold [d_sae].
    ///
    /// - Throws: `ModelError` naming the tensor whose shape does not fit the others.
    public init(architecture: Architecture, point: ActivationPoint, block: Int?, subtractsDecoderBias: Bool, encoder: Tensor, encoderBias: Tensor,
                decoder: Tensor, decoderBias: Tensor, threshold: Tensor?, source: String) throws(ModelError) {
        guard encoder.rank == 2, encoder.shape[0] > 0, encoder.shape[1] > 0 else {
            throw ModelError(file: source, field: "W_enc", reason: "its shape is \(encoder.shape); it must be [d_in][d_sae]")
        }
        let (dIn, dSAE) = (encoder.shape[0], encoder.shape[1])
        func misfit(_ name: String, _ tensor: Tensor, _ expected: [Int]) throws(ModelError) {
            guard tensor.shape != expected else { return }
            throw ModelError(file: source, field: name, reason: "its shape is \(tensor.shape), not the \(expected) that W_enc's d_in \(dIn) and d_sae \(dSAE) need")
        }
        try misfit("b_enc", encoderBias, [dSAE])
        try misfit("W_dec", decoder, [dSAE, dIn])
        try misfit("b_dec", decoderBias, [dIn])
        switch architecture {
        case .jumpReLU:
            guard let threshold else { throw ModelError(file: source, field: "threshold", reason: "a JumpReLU SAE needs a threshold per feature") }
            try misfit("threshold", threshold, [dSAE])
        case .topK(let k):
            guard (1...dSAE).contains(k) else { throw ModelError(file: source, field: "k", reason: "k is \(k); a TopK SAE of \(dSAE) features keeps 1 to \(dSAE)") }
        case .standard:
            break
        }
        self.architecture = architecture
        self.point = point
        self.block = block
        self.subtractsDecoderBias = subtractsDecoderBias
        // Transposed once, here: every encoding then reads W_enc row by row through its strides.
        encoderRows = (try? encoder.transposing()) ?? encoder
        self.encoderBias = encoderBias
        self.decoder = decoder
        self.decoderBias = decoderBias
        self.threshold = architecture == .jumpReLU ? threshold : nil
    }

    /// The feature activations of `activations`, whose last axis is d_in wide: the same leading
    /// axes (and labels), then a `feature` axis of d_sae.
    public func encode(_ activations: Tensor) throws(TensorError) -> Tensor {
        try checkWidth(activations, inputWidth, "encode", "d_in")
        let input = subtractsDecoderBias ? try activations.combined(.subtract, decoderBias) : activations
        let rows = try input.reshaped([input.count / inputWidth, inputWidth])
        let pre = try Tensor.matmulTransposed(rows, encoderRows).combined(.add, encoderBias)
        var values = Array(pre.values)
        switch architecture {
        case .standard, .jumpReLU:
            for index in values.indices { values[index] = activation(values[index], feature: index % featureCount) }
        case .topK(let k):
            values = Self.keepingLargest(k, of: values, rowWidth: featureCount)
        }
        return Self.rows(values, width: featureCount, axis: "feature", like: activations)
    }

    /// The activations of `features` alone for each row of `activations` (last axis d_in wide):
    /// what `encode` gives in those columns, [rows][features.count], computed from their encoder
    /// rows only — except for a TopK SAE, whose kept features depend on the whole row.
    ///
    /// - Throws: when a row is not d_in wide or a feature is not the SAE's.
    public func encode(_ activations: Tensor, features: [Int]) throws(TensorError) -> Tensor {
        try checkWidth(activations, inputWidth, "encode", "d_in")
        if let outside = features.first(where: { !(0..<featureCount).contains($0) }) {
            throw TensorError("feature \(outside) is not one of the SAE's \(featureCount) (0…\(featureCount - 1))")
        }
        let rowCount = activations.count / inputWidth
        if case .topK = architecture {
            let all = try encode(activations).values
            return Tensor((0..<rowCount).flatMap { row in features.map { all[row * featureCount + $0] } }, shape: [rowCount, features.count])
        }
        let input = subtractsDecoderBias ? try activations.combined(.subtract, decoderBias) : activations
        let encoder = Tensor(features.flatMap { encoderRows.values[($0 * inputWidth)..<(($0 + 1) * inputWidth)] }, shape: [features.count, inputWidth])
        var values = Array(try Tensor.matmulTransposed(try input.reshaped([rowCount, inputWidth]), encoder).values)
        for index in values.indices {
            let feature = features[index % features.count]
            values[index] = activation(values[index] + encoderBias.values[feature], feature: feature)
        }
        return Tensor(values, shape: [rowCount, features.count])
    }

    /// Feature `feature`'s activation from its pre-activation `pre`, for an SAE whose features
    /// each fire on their own (standard: ReLU; JumpReLU: ReLU above the feature's threshold).
    private func activation(_ pre: Float, feature: Int) -> Float {
        guard threshold.map({ pre > $0.values[feature] }) ?? true else { return 0 }
        return max(pre, 0)
    }

    /// The reconstruction of feature activations `features` (last axis d_sae wide): the same
    /// leading axes, then a `width` axis of d_in.
    public func decode(_ features: Tensor) throws(TensorError) -> Tensor {
        try checkWidth(features, featureCount, "decode", "d_sae")
        let out = try Tensor.matmul(features, decoder).combined(.add, decoderBias)
        return Self.rows(out.values, width: inputWidth, axis: "width", like: features)
    }

    /// Feature `feature`'s direction: its row of W_dec, d_in wide.
    ///
    /// - Throws: when there is no such feature.
    public func direction(_ feature: Int) throws(TensorError) -> Tensor {
        guard (0..<featureCount).contains(feature) else { throw TensorError("feature \(feature) is not one of the SAE's \(featureCount) (0…\(featureCount - 1))") }
        return Tensor(Array(decoder.values[(feature * inputWidth)..<((feature + 1) * inputWidth)]), shape: [inputWidth], axes: ["width"])
    }

    /// The same SAE for inputs `scale` times smaller than those it was trained on (SAELens'
    /// `fold_activation_norm_scaling_factor`, which `from_pretrained` applies for
    /// `normalize_activations: expected_average_only_in`): W_enc × scale, W_dec and b_dec ÷ scale.
    public func foldingInputScale(_ scale: Float) -> SparseAutoencoder {
        func scaled(_ tensor: Tensor, _ factor: Float) -> Tensor { tensor.combined(.multiply, scalar: factor) }
        // The shapes are those already checked.
        return (try? SparseAutoencoder(architecture: architecture, point: point, block: block, subtractsDecoderBias: subtractsDecoderBias,
                                       encoder: scaled(encoderRows, scale).transposing(), encoderBias: encoderBias, decoder: scaled(decoder, 1 / scale),
                                       decoderBias: scaled(decoderBias, 1 / scale), threshold: threshold, source: "")) ?? self
    }

    /// Refuses an SAE a model of configuration `c` (from `file`) cannot run: a hook it lacks, a
    /// point an SAE cannot be over, a d_in that is not the hook's width.
    public func check(fits c: ModelConfiguration, file: String) throws(ModelError) {
        func refuse(_ reason: String) -> ModelError { ModelError(file: file, field: "sae", reason: reason) }
        guard point.isEditable, point != .logits else { throw refuse("an SAE over \(point.rawValue) is not read") }
        if let block, let misfit = c.blockMisfit(block) { throw refuse("the SAE reads \(hookName), but \(misfit)") }
        let width = point.width(in: c, layer: block ?? 0, contextLength: 1)
        guard width == inputWidth else {
            throw refuse("the SAE's d_in is \(inputWidth), but the model's \(hookName) is \(width) wide: an SAE of another model")
        }
    }

    private func checkWidth(_ tensor: Tensor, _ width: Int, _ operation: String, _ name: String) throws(TensorError) {
        guard tensor.rank >= 1, tensor.shape[tensor.rank - 1] == width else {
            throw TensorError("\(operation) takes rows of \(width) values (the SAE's \(name)); got a Tensor \(tensor.shapeText)")
        }
    }

    /// `values` in rows of `width`, the leading axes (and their labels) those of `like`.
    private static func rows(_ values: some Collection<Float>, width: Int, axis: String, like: Tensor) -> Tensor {
        Tensor(values, shape: like.shape.dropLast() + [width], axes: like.axes.dropLast() + [axis], labels: like.labels.dropLast() + [nil])
    }

    /// Each row of `values` with its `k` largest values (ReLU applied) kept and the rest 0.
    static func keepingLargest(_ k: Int, of values: [Float], rowWidth: Int) -> [Float] {
        var result = [Float](repeating: 0, count: values.count)
        for start in stride(from: 0, to: values.count, by: rowWidth) {
            let row = start..<(start + rowWidth)
            let largest = row.sorted { a, b in values[a] > values[b] || (values[a] == values[b] && a < b) }.prefix(k)
            for index in largest { result[index] = max(values[index], 0) }
        }
        return result
    }
}

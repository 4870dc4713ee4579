import GGUF

/// What `lumen quantize` and `quantize(m, to:)` can produce: one type for every matrix, or one of
/// llama.cpp's mixes, which give the tensors that matter most more bits.
public enum QuantizationScheme: String, Sendable, CaseIterable, CustomStringConvertible {
    case f32 = "F32"
    case f16 = "F16"
    case q8_0 = "Q8_0"
    case q4_0 = "Q4_0"
    case q4_1 = "Q4_1"
    case q5_1 = "Q5_1"
    case q2_K = "Q2_K"
    case q3_K = "Q3_K"
    case q4_K = "Q4_K"
    case q5_K = "Q5_K"
    case q6_K = "Q6_K"
    case q3_K_M = "Q3_K_M"
    case q4_K_M = "Q4_K_M"
    case q5_K_S = "Q5_K_S"
    case q5_K_M = "Q5_K_M"
    case mxfp4MoE = "MXFP4_MOE"

    /// Parses a name such as `q4_k_m` (any case).
    public init?(name: String) {
        guard let scheme = Self.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else { return nil }
        self = scheme
    }

    /// The name, e.g. `Q4_K_M`.
    public var description: String { rawValue }

    /// A mix's departure from its base type for one matrix: given a block weight's role (e.g.
    /// `.down`, `blk.N.ffn_down.weight`), its layer and the model's layer count — for the
    /// value-like roles, its place among the model's value-like matrices and their count, as
    /// llama.cpp counts `i_attention_wv` — the type it gets instead, or nil for the base type.
    private typealias Rules = @Sendable (_ role: TensorName, _ layer: Int, _ layers: Int) -> TensorType?
    /// A mix: the type of the output matrix (and of a tied embedding), and the rules for the others.
    private typealias Mix = (output: TensorType, rules: Rules)

    /// The matrices llama.cpp's mixes treat as attention's values (`category_is_attn_v`): a
    /// value matrix, or one that holds the values with other rows (`attn_qkv`).
    static let valueLikeRoles: Set<TensorName> = [.value, .queryKeyValue]

    /// The experts' matrices (three-dimensional tensors).
    private static let expertRoles: Set<TensorName> = [.gateExperts, .upExperts, .downExperts, .gateUpExperts]

    /// What each scheme is: the type most matrices get, llama.cpp's `general.file_type`
    /// (`llama_ftype`) for it, and for llama.cpp's mixes the rules of its `llama_tensor_get_type`.
    private static let table: [QuantizationScheme: (baseType: TensorType, fileType: UInt32, mix: Mix?)] = [
        .f32: (.f32, 0, nil), .f16: (.f16, 1, nil), .q8_0: (.q8_0, 7, nil), .q4_0: (.q4_0, 2, nil),
        .q4_1: (.q4_1, 3, nil), .q5_1: (.q5_1, 9, nil), .q2_K: (.q2_K, 10, nil), .q3_K: (.q3_K, 11, nil),
        .q4_K: (.q4_K, 14, nil), .q5_K: (.q5_K, 16, nil), .q6_K: (.q6_K, 18, nil),
        .q3_K_M: (.q3_K, 12, (.q6_K, { role, layer, layers in
            switch role {
            case .value, .queryKeyValue: layer < 2 ? .q5_K : .q4_K
            case .down, .downExperts, .downSharedExpert: layer < layers / 16 ? .q5_K : .q4_K
            case .attentionOutput: .q4_K
            default: nil
            }
        })),
        .q4_K_M: (.q4_K, 15, (.q6_K, { role, layer, layers in
            switch role {
            case .value, .queryKeyValue, .down, .downExperts, .downSharedExpert: usesMoreBits(layer: layer, of: layers) ? .q6_K : nil
            default: nil
            }
        })),
        .q5_K_S: (.q5_K, 16, (.q6_K, { _, _, _ in nil })),
        .q5_K_M: (.q5_K, 17, (.q6_K, { role, layer, layers in
            switch role {
            case .value, .queryKeyValue, .down, .downExperts, .downSharedExpert: usesMoreBits(layer: layer, of: layers) ? .q6_K : nil
            default: nil
            }
        })),
        // gpt-oss's own format: experts in MXFP4, every other matrix (the output included) Q8_0.
        .mxfp4MoE: (.q8_0, 38, (.q8_0, { role, _, _ in expertRoles.contains(role) ? .mxfp4 : nil })),
    ]

    /// The type most matrices get.
    var baseType: TensorType { Self.table[self]?.baseType ?? .f32 }

    /// llama.cpp's `general.file_type` (`llama_ftype`) for the scheme.
    var fileType: UInt32 { Self.table[self]?.fileType ?? 0 }

    /// The matrices llama.cpp's quantizer leaves as they are (`llama-quant.cpp`): a mixture of
    /// experts' router (`ffn_gate_inp`), a recurrent layer's convolution (`ssm_conv1d`, LFM2's
    /// `shortconv.conv`, which its operation reads as F32) and Gemma 4's per-layer embedding
    /// product (`per_layer_model_proj`, "not too big").
    static let keptInF32: Set<TensorName> = [.router, .convolution, .shortConvolution, .perLayerModelProjection]

    /// What llama.cpp's mixes give a model of exactly eight experts (Mixtral's shape) instead of
    /// their rules: its keys and values Q8_0 ("trades just ~128MB"), its attention output Q5_K
    /// in the mixes of fewer bits; nil where the mix's own rule stands.
    private func eightExpertType(_ role: TensorName) -> TensorType? {
        switch role {
        case .key, .value, .queryKeyValue: .q8_0
        case .attentionOutput: [.q3_K_M, .q4_K_M].contains(self) ? .q5_K : baseType
        default: nil
        }
    }

    /// The type for tensor `name` of shape `shape` in a model of `layers` blocks; `tiedOutput`
    /// says the model has no `output.weight` and reuses the token embedding as its output;
    /// `valueOrdinal` is a value-like matrix's place among the model's and their count
    /// (`valueOrdinals`; without it, its layer among the layers); `experts` is the model's
    /// `expert_count` (0 for a dense model).
    ///
    /// Vectors (norms) and the matrices of `keptInF32` stay F32. A scheme named after a type gives every matrix that type; the
    /// mixes follow llama.cpp's `llama_tensor_get_type` (without an importance matrix): the output
    /// matrix (the token embedding when tied) gets Q6_K in the K-quant mixes (Q8_0 in MXFP4_MOE), and the tensors their rules name more
    /// bits (experts' and the shared expert's down matrices as the down matrix: llama.cpp matches
    /// `ffn_down` in `ffn_down_exps` and `ffn_down_shexp`; a fused `attn_qkv` as the value matrix,
    /// counted among the value-like matrices, not the layers). A matrix whose rows are not a whole number of blocks falls back to a format whose
    /// blocks fit, as llama.cpp does (`TypeQuantizer.fallback`), else to F16.
    func type(forTensor name: String, shape: [Int], layers: Int, tiedOutput: Bool = false,
              valueOrdinal: (index: Int, count: Int)? = nil, experts: Int = 0) -> TensorType {
        let role = TensorName.blockWeight(name).map(\.role) ?? TensorName(rawValue: String(name.dropLast(".weight".count)))
        guard shape.count >= 2, name.hasSuffix(".weight"), !(role.map(Self.keptInF32.contains) ?? false) else { return .f32 }
        var type = baseType
        if let mix = Self.table[self]?.mix {
            if name == TensorName.output.weight() || (tiedOutput && name == TensorName.tokenEmbedding.weight()) {
                type = mix.output
            } else if let block = TensorName.blockWeight(name), let role = block.role {
                let (index, count) = Self.valueLikeRoles.contains(role) ? valueOrdinal ?? (block.layer, layers) : (block.layer, layers)
                if let chosen = (experts == 8 ? eightExpertType(role) : nil) ?? mix.rules(role, index, count) { type = chosen }
            }
        }
        return Self.fitting(type, rowLength: shape[0])
    }

    /// Each value-like matrix among `names` (in file order, as llama.cpp counts them): its place
    /// among them and their count. In a hybrid model they are fewer than the layers.
    static func valueOrdinals(_ names: [String]) -> [String: (index: Int, count: Int)] {
        let valueLike = names.filter { TensorName.blockWeight($0)?.role.map(valueLikeRoles.contains) == true }
        return Dictionary(uniqueKeysWithValues: valueLike.enumerated().map { ($1, ($0, valueLike.count)) })
    }

    /// `type`, or its fallback (`TypeQuantizer.fallback`) whose blocks divide `rowLength`.
    private static func fitting(_ type: TensorType, rowLength: Int) -> TensorType {
        if rowLength % type.layout.blockSize == 0 { return type }
        let fallback = type.quantizer?.fallback ?? .f16
        return rowLength % fallback.layout.blockSize == 0 ? fallback : .f16
    }

    /// llama.cpp's `use_more_bits`: the first and last eighth of the layers, and every third
    /// layer in between.
    static func usesMoreBits(layer: Int, of layers: Int) -> Bool {
        layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2
    }
}

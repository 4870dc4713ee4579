/// A model's tensors by role, under llama.cpp's names (`LLM_TENSOR_NAMES` in `llama-arch.cpp`):
/// the one table of them. A block's tensor is `blk.N.<name>.weight` (or `.bias`); the model's
/// own are `<name>.weight`. Architectures and the quantizer's mixes name tensors only through it.
public enum TensorName: String, CaseIterable, Sendable {
    case tokenEmbedding = "token_embd"
    case output = "output"
    case outputNorm = "output_norm"
    /// The final norm under the name LFM2's files give it.
    case tokenEmbeddingNorm = "token_embd_norm"
    /// Llama 3's per-dimension RoPE frequency factors.
    case ropeFrequencies = "rope_freqs"
    /// Phi-3's RoPE factors for short contexts.
    case ropeFactorsShort = "rope_factors_short"
    /// Phi-3's RoPE factors for contexts longer than it was trained on.
    case ropeFactorsLong = "rope_factors_long"
    case attentionNorm = "attn_norm"
    case query = "attn_q"
    case key = "attn_k"
    case value = "attn_v"
    /// Query, key and value rows in one matrix (Phi-3).
    case queryKeyValue = "attn_qkv"
    case queryNorm = "attn_q_norm"
    case keyNorm = "attn_k_norm"
    case attentionOutput = "attn_output"
    case attentionPostNorm = "post_attention_norm"
    /// gpt-oss's attention sinks: a score per query head.
    case attentionSinks = "attn_sinks"
    case feedForwardNorm = "ffn_norm"
    case feedForwardPostNorm = "post_ffw_norm"
    case gate = "ffn_gate"
    /// The up projection, or gate and up rows in one matrix (Phi-3).
    case up = "ffn_up"
    case down = "ffn_down"
    /// A mixture of experts' router: a score per expert.
    case router = "ffn_gate_inp"
    /// A bias added to the router's probabilities only to choose the experts (`exp_probs_b.bias`,
    /// DeepSeek V3's, LFM2-MoE's).
    case expertSelectionBias = "exp_probs_b"
    /// Every expert's gate, up and down matrices in one three-dimensional tensor.
    case gateExperts = "ffn_gate_exps"
    case upExperts = "ffn_up_exps"
    case downExperts = "ffn_down_exps"
    /// Every expert's gate and up matrices in one tensor: each expert's gate rows, then its up rows.
    case gateUpExperts = "ffn_gate_up_exps"
    /// The shared expert (beside the routed ones): its gate (one weight per input, a sigmoid of
    /// their product scaling its output) and its feed-forward.
    case sharedExpertGate = "ffn_gate_inp_shexp"
    case gateSharedExpert = "ffn_gate_shexp"
    case upSharedExpert = "ffn_up_shexp"
    case downSharedExpert = "ffn_down_shexp"
    /// A Gated DeltaNet layer's gate of its output (`z`), or the gate of a gated attention layer's output.
    case attentionGate = "attn_gate"
    /// A Gated DeltaNet layer's short convolution: a row of weights per channel.
    case convolution = "ssm_conv1d"
    /// Its per-head decay bias (`ssm_dt.bias`), decay rates (`ssm_a`, −exp(A_log), a tensor without suffix), decay and
    /// write-strength projections, output norm and output projection.
    case decayBias = "ssm_dt"
    case decayRate = "ssm_a"
    case decay = "ssm_alpha"
    case writeStrength = "ssm_beta"
    case recurrentNorm = "ssm_norm"
    case recurrentOutput = "ssm_out"
    /// LFM2's short-convolution layer: its input product (three parts: a gate before the
    /// convolution, one after it, and the input), its convolution (a row per channel) and its
    /// output product.
    case shortConvolutionInput = "shortconv.in_proj"
    case shortConvolution = "shortconv.conv"
    case shortConvolutionOutput = "shortconv.out_proj"
    /// Gemma 4's per-layer embeddings: a table of every layer's token embeddings side by side,
    /// the product of the scaled embedding giving each layer's part, and that part's norm.
    case perLayerTokenEmbedding = "per_layer_token_embd"
    case perLayerModelProjection = "per_layer_model_proj"
    case perLayerProjectionNorm = "per_layer_proj_norm"
    /// A Gemma 4 layer's gate of its per-layer embedding, the product back to the residual
    /// stream, and its norm.
    case perLayerInputGate = "inp_gate"
    case perLayerProjection = "proj"
    case perLayerPostNorm = "post_norm"
    /// A Gemma 4 layer's output scale (one number).
    case layerOutputScale = "layer_output_scale"
    /// Gemma 4's mixture of experts: the norm before the experts, and the norms after the dense
    /// feed-forward and after the experts.
    case expertsNorm = "pre_ffw_norm_2"
    case denseFeedForwardPostNorm = "post_ffw_norm_1"
    case expertsPostNorm = "post_ffw_norm_2"

    /// The weight's name in the file: of block `layer`, or of the model when `layer` is nil.
    public func weight(layer: Int? = nil) -> String { stem(layer) + ".weight" }

    /// The bias's name in the file: of block `layer`, or of the model when `layer` is nil.
    public func bias(layer: Int? = nil) -> String { stem(layer) + ".bias" }

    /// The name of its per-tensor scale (`blk.3.attn_q.scale`, one number).
    public func scale(layer: Int? = nil) -> String { stem(layer) + ".scale" }

    /// The name of a tensor stored without a suffix (`blk.3.ssm_a`).
    public func bare(layer: Int? = nil) -> String { stem(layer) }

    private func stem(_ layer: Int?) -> String { layer.map { "blk.\($0).\(rawValue)" } ?? rawValue }

    /// The block and role of a block's weight named `name` (`blk.12.ffn_down.weight`), or nil for
    /// any other tensor. The role is nil for a tensor of a block this table does not name.
    public static func blockWeight(_ name: String) -> (layer: Int, role: TensorName?)? {
        let parts = name.split(separator: ".")
        guard parts.count >= 4, parts[0] == "blk", let layer = Int(parts[1]), parts.last == "weight" else { return nil }
        return (layer, TensorName(rawValue: parts[2..<(parts.count - 1)].joined(separator: ".")))
    }
}

import Foundation
import GGUF

/// How a model stretches RoPE past the context it was trained for (`rope.scaling.*`), as
/// llama.cpp's context and ggml's `rope_yarn` apply it: linear interpolation divides every angle by
/// the factor; YaRN (gpt-oss, long-context Qwen) interpolates only the slow dimension pairs,
/// extrapolates the fast ones, ramps between them, and scales the rotation by its attention factor.
public struct RoPEScaling: Sendable, Equatable {
    /// What every angle is multiplied by for interpolation (1 / `rope.scaling.factor`).
    public var frequencyScale: Float = 1
    /// How far the fast pairs keep their unscaled angles (llama.cpp's `yarn_ext_factor`: 1 for YaRN, else 0).
    public var extrapolation: Float = 0
    /// What cosines and sines are multiplied by (YaRN's `mscale`, with the attention factor;
    /// Phi-3's long-context files give one too, `rope.scaling.attn_factor`).
    public var magnitude: Float = 1
    /// The rotations per trained context that bound YaRN's ramp (`yarn_beta_fast`, `yarn_beta_slow`).
    public var betaFast: Float = 32, betaSlow: Float = 1
    /// The context RoPE was trained for (`rope.scaling.original_context_length`).
    public var originalContextLength: Int = 0

    /// No scaling.
    public static let unscaled = RoPEScaling()

    /// The scaling the file's `rope.scaling.*` keys under `prefix` ask for, as llama.cpp's
    /// `llama_context` resolves them with no overrides.
    init(gguf: GGUFFile, prefix: String, originalContextLength: Int) throws(ModelError) {
        func number(_ key: String) -> Float? { gguf.metadata[prefix + key]?.doubleValue.map { Float($0) } }
        let type = gguf.metadata[prefix + "rope.scaling.type"]?.stringValue ?? "linear"
        // Phi-3's "longrope" is its factor tensors (`DecoderModel.ropeFactors`) and the attention
        // factor below; the angles themselves are not stretched.
        guard ["none", "linear", "yarn", "longrope"].contains(type) else {
            throw ModelError(file: gguf.path, field: prefix + "rope.scaling.type", reason: "RoPE scaling \"\(type)\" is not supported (none, linear, yarn and longrope are)")
        }
        let factor = number("rope.scaling.factor") ?? 0
        guard factor >= 0, factor.isFinite else {
            throw ModelError(file: gguf.path, field: prefix + "rope.scaling.factor", reason: "\(factor) is not a scaling factor")
        }
        self.originalContextLength = originalContextLength
        frequencyScale = type == "none" || type == "longrope" || factor == 0 ? 1 : 1 / factor
        let extrapolationKey = number("rope.scaling.yarn_ext_factor") ?? -1
        extrapolation = extrapolationKey >= 0 ? extrapolationKey : (type == "yarn" ? 1 : 0)
        betaFast = number("rope.scaling.yarn_beta_fast") ?? 32
        betaSlow = number("rope.scaling.yarn_beta_slow") ?? 1
        let attentionFactor = number("rope.scaling.attn_factor") ?? 1
        if extrapolation != 0 {
            // YaRN's mscale, 0.1 ln(factor) + 1 (over the same with `yarn_log_multiplier` when the
            // file has one); ggml's kernel multiplies by it itself, and llama.cpp divides it back out
            // of the attention factor it passes, so the magnitude is mscale alone.
            let stretch = 1 / frequencyScale
            func mscale(_ multiplier: Float) -> Float { stretch <= 1 ? 1 : 0.1 * multiplier * log(stretch) + 1 }
            let logMultiplier = number("rope.scaling.yarn_log_multiplier") ?? 0
            magnitude = (logMultiplier != 0 ? mscale(1) / mscale(logMultiplier) : mscale(1)) * attentionFactor
        } else {
            magnitude = (number("rope.scaling.yarn_attn_factor") ?? 1) * attentionFactor
        }
    }

    private init() {}

    /// How the scaling reads in `lumen info` ("YaRN ×32 from 4096 positions"), nil for none.
    public var summary: String? {
        let factor = 1 / frequencyScale
        let stretch = factor.rounded() == factor ? String(Int(factor)) : String(factor)
        if extrapolation != 0 { return "YaRN ×\(stretch) from \(originalContextLength) positions" }
        return frequencyScale == 1 ? nil : "linear ×\(stretch)"
    }

    /// How far each of the `dimensions / 2` rotated pairs keeps its unscaled angle, for frequency
    /// base `base` (YaRN's ramp, `rope_yarn_ramp` over `ggml_rope_yarn_corr_dims`: the pairs that
    /// turn more than `betaFast` times over the trained context keep their angle, those that turn
    /// fewer than `betaSlow` times are interpolated); all 0 without extrapolation.
    func extrapolationMixes(dimensions: Int, base: Float) -> [Double] {
        guard extrapolation != 0 else { return [Double](repeating: 0, count: dimensions / 2) }
        func correctionDimension(_ rotations: Float) -> Float {
            Float(dimensions) * log(Float(originalContextLength) / (rotations * 2 * .pi)) / (2 * log(base))
        }
        let low = max(0, correctionDimension(betaFast).rounded(.down))
        let high = min(Float(dimensions - 1), correctionDimension(betaSlow).rounded(.up))
        return (0..<(dimensions / 2)).map { pair in
            Double((1 - min(1, max(0, (Float(pair) - low) / max(0.001, high - low)))) * extrapolation)
        }
    }

    /// The cosine and sine of a rotation by unscaled angle `angle`, interpolated but for the
    /// share `mix` of it its pair keeps (`extrapolationMixes`), times the magnitude (`rope_yarn`).
    func rotation(angle: Double, mix: Double) -> (cosine: Float, sine: Float) {
        let theta = Double(frequencyScale) * angle * (1 - mix) + angle * mix
        return (Float(cos(theta)) * magnitude, Float(sin(theta)) * magnitude)
    }
}

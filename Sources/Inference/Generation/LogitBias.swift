/// Fixed amounts added to chosen tokens' logits at every step, before any other processor
/// (llama.cpp's `llama_sampler_logit_bias`, OpenAI's `logit_bias`); −∞ bans a token.
public struct LogitBias: LogitProcessor {
    /// Each token's amount.
    public let biases: [Int32: Float]

    /// Adds `biases[t]` to token t's logit.
    public init(_ biases: [Int32: Float]) {
        self.biases = biases
    }

    public mutating func process(_ logits: UnsafeMutableBufferPointer<Float>) {
        for (token, bias) in biases where token >= 0 && Int(token) < logits.count {
            logits[Int(token)] += bias
        }
    }
}

import GenerationTypes

/// llama.cpp's penalties on the tokens among the last `window` of the sequence, prompt included
/// (`llama_sampler_penalties`): each such token's logit is divided by `repeat` when positive and
/// multiplied by it otherwise, then lowered by `frequency` times the times it occurs there and by
/// `presence` once.
public struct TokenPenalties: LogitProcessor {
    /// The repetition penalty's factor (1: no change).
    public let repeatFactor: Float
    /// Subtracted once per occurrence (0: no change).
    public let frequency: Float
    /// Subtracted once per token present (0: no change).
    public let presence: Float
    /// How many of the latest tokens count.
    public let window: Int
    /// The window's tokens, oldest first.
    private var recent: [Int32] = []
    /// Where the oldest token of `recent` is, once it is full (a ring).
    private var oldest = 0
    /// How many times each token occurs in the window.
    private var counts: [Int32: Int] = [:]

    /// Penalties of `repeat`, `frequency` and `presence` over the last `window` tokens.
    public init(repeat repeatFactor: Float, frequency: Float = 0, presence: Float = 0, window: Int) {
        self.repeatFactor = repeatFactor
        self.frequency = frequency
        self.presence = presence
        self.window = max(0, window)
    }

    /// The penalties `sampling` asks for, or nil when they change nothing.
    public init?(_ sampling: SamplingOptions) {
        guard sampling.repeatWindow != 0, sampling.repeatPenalty != 1 || sampling.frequencyPenalty != 0 || sampling.presencePenalty != 0 else { return nil }
        self.init(repeat: sampling.repeatPenalty, frequency: sampling.frequencyPenalty, presence: sampling.presencePenalty, window: sampling.repeatWindow)
    }

    public mutating func start(prompt: [Int32]) {
        recent = []
        oldest = 0
        counts = [:]
        for token in prompt.suffix(window) { didAppend(token) }
    }

    public mutating func process(_ logits: UnsafeMutableBufferPointer<Float>) {
        for (token, count) in counts where token >= 0 && Int(token) < logits.count {
            var value = logits[Int(token)]
            value = value > 0 ? value / repeatFactor : value * repeatFactor
            logits[Int(token)] = value - Float(count) * frequency - presence
        }
    }

    public mutating func didAppend(_ token: Int32) {
        guard window > 0 else { return }
        counts[token, default: 0] += 1
        guard recent.count == window else {
            recent.append(token)
            return
        }
        let leaving = recent[oldest]
        counts[leaving] = counts[leaving].flatMap { $0 > 1 ? $0 - 1 : nil }
        recent[oldest] = token
        oldest = (oldest + 1) % window
    }
}

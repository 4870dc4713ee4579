/// llama.cpp's repetition penalty: the logits of tokens among the last `window` of the sequence
/// (prompt included) are divided by `penalty` when positive and multiplied by it when negative.
public struct RepetitionPenalty: LogitProcessor {
    /// The factor (1: no change).
    public let penalty: Float
    /// How many of the latest tokens count.
    public let window: Int
    private var recent: [Int32] = []

    /// A penalty of `penalty` over the last `window` tokens.
    public init(penalty: Float, window: Int) {
        self.penalty = penalty
        self.window = window
    }

    public mutating func start(prompt: [Int32]) {
        recent = Array(prompt.suffix(window))
    }

    public mutating func process(_ logits: UnsafeMutableBufferPointer<Float>) {
        for token in Set(recent) where token >= 0 && Int(token) < logits.count {
            let value = logits[Int(token)]
            logits[Int(token)] = value > 0 ? value / penalty : value * penalty
        }
    }

    public mutating func didAppend(_ token: Int32) {
        recent.append(token)
        if recent.count > window { recent.removeFirst(recent.count - window) }
    }
}

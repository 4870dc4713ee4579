/// Proposes the tokens likely to follow a context, for speculative decoding to verify.
protocol Drafter {
    /// Up to `count` tokens to follow `context` (the prompt and the tokens generated so far);
    /// fewer, or none, when it has no good guess.
    mutating func draft(after context: [Int32], count: Int) -> [Int32]
    /// Whether asking costs work even when nothing is proposed (a draft model's forward pass),
    /// so a drafter that keeps proposing nothing is asked less often.
    var asksCost: Bool { get }
    /// Reads the prompt ahead of the first draft, while the model reads it too.
    mutating func prepare(prompt: [Int32])
}

extension Drafter {
    /// Most drafters need nothing ahead.
    mutating func prepare(prompt: [Int32]) {}
}

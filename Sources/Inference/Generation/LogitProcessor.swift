/// Changes the logits before each token is drawn: a repetition penalty, a grammar's mask, a
/// logit bias. A generation works on its own copy of each processor (they are values), so a
/// processor may keep state from step to step; the model's own log-probabilities, which a
/// generation reports, are those of the logits before any processor ran.
public protocol LogitProcessor: Sendable {
    /// Called once, before the first step, with the prompt's tokens.
    mutating func start(prompt: [Int32])
    /// Changes `logits`, the scores of every token of the vocabulary for the next step, in place.
    mutating func process(_ logits: UnsafeMutableBufferPointer<Float>)
    /// Called with each token that joins the sequence after a step: the one drawn, or the forced
    /// one when teacher-forcing.
    mutating func didAppend(_ token: Int32)
}

extension LogitProcessor {
    public mutating func start(prompt: [Int32]) {}
    public mutating func didAppend(_ token: Int32) {}
}

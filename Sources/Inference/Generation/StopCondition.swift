import GenerationTypes
import Tokenizers
/// Ends a generation at a token: the end of a turn, a grammar that is complete, a budget. The
/// token that ends it is counted but its text is not shown (as an end-of-generation token's is
/// not). Stop strings, which end text rather than tokens, are the options' `stopStrings`.
public protocol StopCondition: Sendable {
    /// Why the generation ends with `token`, or nil to go on.
    mutating func finish(at token: Int32) -> FinishReason?
}

/// Stops at the tokens the vocabulary marks as ending a generation (EOS, end of turn).
public struct EndOfGenerationStop: StopCondition {
    private let tokenizer: Tokenizer

    /// Stops at `tokenizer`'s end-of-generation tokens.
    public init(tokenizer: Tokenizer) {
        self.tokenizer = tokenizer
    }

    public func finish(at token: Int32) -> FinishReason? {
        tokenizer.isEndOfGeneration(token) ? .eos : nil
    }
}

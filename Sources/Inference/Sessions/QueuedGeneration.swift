import GenerationTypes
import Tokenizers

/// A generation asked of a `ModelSession`: what to generate, and where its events go. Made by
/// `ModelSession.stream`, run alone or in the session's batch, and ended exactly once — by
/// `finish` or `fail`, which give its lease back before the stream ends, so whoever reads the
/// end finds the session free.
final class QueuedGeneration: Sendable {
    let prompt: ModelSession.Prompt
    let options: GenerationOptions
    let pipeline: GenerationPipeline
    let stop: StopSignal
    /// A state to start from (`ModelSession.adopt`).
    let inherited: ModelSession.CachedPrefix?
    let lease: SessionLease?
    let continuation: AsyncThrowingStream<TokenEvent, any Error>.Continuation
    /// Raised when whoever reads the events has gone: a generation in a batch then ends before
    /// its next token.
    let abandoned = StopSignal()
    /// When it was asked for: its time to first token counts from here.
    let arrived = ContinuousClock.now

    init(prompt: ModelSession.Prompt, options: GenerationOptions, pipeline: GenerationPipeline, stop: StopSignal,
         inherited: ModelSession.CachedPrefix?, lease: SessionLease?, continuation: AsyncThrowingStream<TokenEvent, any Error>.Continuation) {
        self.prompt = prompt
        self.options = options
        self.pipeline = pipeline
        self.stop = stop
        self.inherited = inherited
        self.lease = lease
        self.continuation = continuation
    }

    /// Whether it should end before its next token: stopped, or no one reads it.
    var shouldStop: Bool { stop.isRaised || abandoned.isRaised }

    /// The prompt's tokens (a text is tokenized now, on the caller's thread).
    func promptTokens(_ tokenizer: Tokenizer) -> [Int32] {
        switch prompt {
        case .text(let text): tokenizer.encode(text)
        case .tokens(let tokens): tokens
        }
    }

    /// Hands on a token.
    func emit(_ token: GeneratedToken) {
        continuation.yield(.token(token))
    }

    /// Ends the stream with `summary`.
    func finish(_ summary: GenerationSummary) {
        lease?.release()
        continuation.yield(.finished(summary))
        continuation.finish()
    }

    /// Ends the stream with `error`.
    func fail(_ error: any Error) {
        lease?.release()
        continuation.finish(throwing: error)
    }
}

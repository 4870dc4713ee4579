import GenerationTypes
/// What a generation's event stream adds up to: its tokens, their text and its summary. The one
/// consumer of `TokenEvent` streams: `lumen generate` and `lumen chat`, `generate`/`say` and
/// `batch` in cells, and `lumen serve`'s jobs all collect through it.
public struct GenerationCollector: Sendable {
    /// The tokens so far, in order.
    public private(set) var tokens: [GeneratedToken] = []
    /// Their text, joined.
    public private(set) var text = ""
    /// How the generation ended, once it has.
    public private(set) var summary: GenerationSummary?

    /// An empty collection.
    public init() {}

    /// Takes one event; returns the text it added (empty for the summary).
    @discardableResult
    public mutating func add(_ event: TokenEvent) -> String {
        switch event {
        case .token(let token):
            tokens.append(token)
            text += token.text
            return token.text
        case .finished(let finished):
            summary = finished
            return ""
        }
    }

    /// Collects a whole stream, handing each token to `onToken` as it arrives; throws what the
    /// stream throws (the collection so far is lost with it, so callers that keep partial
    /// results collect with `add`).
    public static func collect(
        _ events: AsyncThrowingStream<TokenEvent, any Error>, onToken: (GeneratedToken) async throws -> Void = { _ in }
    ) async throws -> GenerationCollector {
        var collector = GenerationCollector()
        for try await event in events {
            collector.add(event)
            if case .token(let token) = event { try await onToken(token) }
        }
        return collector
    }
}

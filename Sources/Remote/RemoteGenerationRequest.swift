import OpenAIAPI

/// A request that generates text (`/completions` or `/chat/completions`): where it goes, how to
/// ask for a stream, and the shape of its answer, so one streaming loop serves both.
protocol RemoteGenerationRequest: Encodable, Sendable {
    /// The answer, whole or one streamed chunk.
    associatedtype Response: RemoteGenerationResponse
    /// The path after the base URL.
    static var path: String { get }
    /// Whether to stream.
    var stream: Bool? { get set }
    /// Streaming options.
    var streamOptions: StreamOptions? { get set }
}

extension RemoteGenerationRequest {
    /// This request asking for a stream that ends with a usage chunk.
    var streaming: Self {
        var copy = self
        copy.stream = true
        copy.streamOptions = StreamOptions(includeUsage: true)
        return copy
    }
}

/// An answer, whole or one streamed chunk, as the pieces of text it adds.
protocol RemoteGenerationResponse: Decodable, Sendable {
    /// The pieces of text this answer adds, each a token when the server reports log-probabilities.
    var pieces: [RemotePiece] { get }
    /// Why the generation ended, in the last chunk.
    var finishReason: String? { get }
    /// The server's token counts, when sent.
    var usage: Usage? { get }
}

/// Text a response adds: one token's, when log-probabilities were asked for, else a chunk's.
struct RemotePiece: Sendable {
    /// The text.
    var text: String
    /// Its log-probability, when the server reported one.
    var logProbability: Double?
    /// The most likely tokens at its position, text and log-probability, most likely first.
    var alternatives: [(text: String, logProbability: Double)] = []
}

extension RemotePiece {
    /// A token as the chat completions' shape reports it.
    init(_ entry: TokenLogprob) {
        self.init(text: entry.token, logProbability: entry.logprob, alternatives: entry.topLogprobs.map { ($0.token, $0.logprob) })
    }
}

extension CompletionRequest: RemoteGenerationRequest {
    typealias Response = Completion
    static var path: String { "/completions" }
}

extension ChatCompletionRequest: RemoteGenerationRequest {
    typealias Response = ChatCompletion
    static var path: String { "/chat/completions" }
}

extension Completion: RemoteGenerationResponse {
    var pieces: [RemotePiece] {
        guard let choice = choices.first else { return [] }
        guard let logprobs = choice.logprobs, !logprobs.tokens.isEmpty, logprobs.tokens.joined() == choice.text else {
            return choice.text.isEmpty ? [] : [RemotePiece(text: choice.text)]
        }
        if let entries = logprobs.content { return entries.map(RemotePiece.init) }
        return logprobs.tokens.indices.map { index in
            let top = logprobs.topLogprobs.flatMap { index < $0.count ? $0[index] : nil } ?? [:]
            return RemotePiece(text: logprobs.tokens[index], logProbability: index < logprobs.tokenLogprobs.count ? logprobs.tokenLogprobs[index] : nil,
                               alternatives: top.sorted { $0.value > $1.value }.map { ($0.key, $0.value) })
        }
    }

    var finishReason: String? { choices.first?.finishReason }
}

extension ChatCompletion: RemoteGenerationResponse {
    var pieces: [RemotePiece] {
        guard let choice = choices.first else { return [] }
        let text = choice.delta?.content ?? choice.message?.content ?? ""
        guard let entries = choice.logprobs?.content, !entries.isEmpty, entries.map(\.token).joined() == text else {
            return text.isEmpty ? [] : [RemotePiece(text: text)]
        }
        return entries.map(RemotePiece.init)
    }

    var finishReason: String? { choices.first?.finishReason }
}

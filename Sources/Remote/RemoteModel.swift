import Executors
import Foundation
import GenerationTypes
import Grammars
import NIOHTTP1
import OpenAIAPI

/// A model served over the OpenAI-compatible API by one or more endpoints (replicas): generates
/// from plain prompts (`/completions`) and conversations (`/chat/completions`, rendered by the
/// server's template), streaming tokens as `TokenEvent`s exactly as a local `ModelSession` does.
/// Requests spread over the endpoints, `concurrency` at once on each.
public final class RemoteModel: Sendable {
    /// The model's name on the server.
    public let name: String
    /// The models the first endpoint lists.
    public let served: [ModelCard]
    /// Whether generations ask for each token's log-probability (servers may refuse; llama-cpp-python
    /// needs `--logits_all`).
    public let logprobs: Bool
    /// The endpoints, and how many requests each has running.
    let endpoints: [RemoteEndpoint]
    let pool: FairPool

    /// Connects to `endpoints` (at least one), listing the first one's models; `model` defaults
    /// to the first it lists.
    public static func connect(_ endpoints: [RemoteEndpoint], model: String?, concurrency: Int, logprobs: Bool) async throws -> RemoteModel {
        guard let first = endpoints.first else { throw RemoteError(endpoint: "connect", reason: "no endpoint given") }
        let list = try await first.json(ModelList.self, .GET, "/models")
        guard let name = model ?? list.data.first?.id else {
            throw RemoteError(endpoint: first.baseURL, reason: "/models lists no model; give one with model:")
        }
        return RemoteModel(name: name, served: list.data, logprobs: logprobs, endpoints: endpoints, concurrency: concurrency)
    }

    init(name: String, served: [ModelCard], logprobs: Bool, endpoints: [RemoteEndpoint], concurrency: Int) {
        self.name = name
        self.served = served
        self.logprobs = logprobs
        self.endpoints = endpoints
        pool = FairPool(count: endpoints.count, limit: concurrency)
    }

    /// The endpoints' URLs.
    public var urls: [String] { endpoints.map(\.baseURL) }
    /// Requests at once per endpoint.
    public var concurrency: Int { pool.limit }

    /// Generates after `prompt` (`/completions`), steered inside the model by `steering` (the
    /// server's control vectors and SAE features, by name: Lumen's own fields).
    public func generate(_ prompt: String, options: GenerationOptions, steering: SteeringFields = SteeringFields(),
                         stop: StopSignal = StopSignal()) -> AsyncThrowingStream<TokenEvent, any Error> {
        var request = CompletionRequest(model: name, prompt: prompt, sampling: Self.fields(options), logprobs: logprobs ? 1 : nil)
        request.steering = steering
        return stream(request, options: options, stop: stop)
    }

    /// Generates the next assistant message after `messages` (`/chat/completions`).
    public func chat(_ messages: [ChatMessage], options: GenerationOptions, stop: StopSignal = StopSignal()) -> AsyncThrowingStream<TokenEvent, any Error> {
        let wire = messages.map { WireChatMessage(role: $0.role, content: $0.content) }
        return stream(ChatCompletionRequest(model: name, messages: wire, sampling: Self.fields(options), logprobs: logprobs ? true : nil),
                      options: options, stop: stop)
    }

    /// The `k` most likely next tokens after `prompt`, text and log-probability, from a one-token
    /// greedy completion with `logprobs: k`.
    public func nextTokens(_ prompt: String, k: Int) async throws -> [(text: String, logProbability: Double)] {
        let (completion, endpoint) = try await scoringCompletion(prompt, logprobs: k, echo: nil)
        guard let first = completion.pieces.first, !first.alternatives.isEmpty else {
            throw RemoteError(endpoint: endpoint, reason: "the server sent no log-probabilities (it does not offer logprobs for this model)")
        }
        return Array(first.alternatives.prefix(k))
    }

    /// The log-probability of each token of `text` after the first, as the server scores it:
    /// a one-token greedy completion with `echo` and `logprobs`, whose prompt part is kept.
    public func promptLogProbabilities(_ text: String) async throws -> [Double] {
        let (completion, endpoint) = try await scoringCompletion(text, logprobs: 0, echo: true)
        guard let scored = completion.choices.first?.logprobs?.tokenLogprobs, scored.count >= 2 else {
            throw RemoteError(endpoint: endpoint, reason: "the server sent no log-probabilities for the prompt (it does not offer echo with logprobs)")
        }
        let promptCount = completion.usage?.promptTokens ?? scored.count - 1
        return scored.prefix(promptCount).dropFirst().map { $0 ?? -.infinity }
    }

    /// A whole, greedy, one-token completion of `prompt` asking for `logprobs` (and `echo`), from
    /// an endpoint of the pool: what scoring asks of a server. Returns it and the endpoint's URL.
    private func scoringCompletion(_ prompt: String, logprobs: Int, echo: Bool?) async throws -> (Completion, String) {
        var fields = Self.fields(GenerationOptions(sampling: .greedy, maxTokens: 1))
        fields.topK = nil
        fields.minP = nil
        let request = CompletionRequest(model: name, prompt: prompt, sampling: fields, logprobs: logprobs, echo: echo)
        let index = try await pool.acquire()
        defer { pool.release(index) }
        let endpoint = endpoints[index]
        return (try await endpoint.json(Completion.self, .POST, CompletionRequest.path, body: try JSONEncoder().encode(request)), endpoint.baseURL)
    }

    /// The API's fields for `options`. Servers take a seed of 31 bits at most (llama.cpp reads
    /// -1 as "random"), so the seed is reduced to that.
    static func fields(_ options: GenerationOptions) -> SamplingFields {
        let sampling = options.sampling
        func decimal(_ value: Float) -> Double { Double("\(value)") ?? Double(value) }
        return SamplingFields(maxTokens: options.maxTokens, temperature: decimal(sampling.temperature), topP: decimal(sampling.topP),
                              topK: sampling.topK, minP: decimal(sampling.minP),
                              repeatPenalty: sampling.repeatPenalty == 1 ? nil : decimal(sampling.repeatPenalty),
                              repeatLastN: sampling.repeatWindow == SamplingOptions().repeatWindow ? nil : min(sampling.repeatWindow, Int(Int32.max)),
                              frequencyPenalty: sampling.frequencyPenalty == 0 ? nil : decimal(sampling.frequencyPenalty),
                              presencePenalty: sampling.presencePenalty == 0 ? nil : decimal(sampling.presencePenalty),
                              logitBias: sampling.logitBias.isEmpty ? nil : LogitBiasField(sampling.logitBias.sorted { $0.key < $1.key }.map {
                                  LogitBiasField.Entry(token: .id(Int($0.key)), bias: decimal($0.value))
                              }),
                              seed: Int(sampling.seed & 0x7fff_ffff), stop: options.stopStrings.isEmpty ? nil : StopSequences(options.stopStrings))
    }

    /// Streams `request` from an endpoint of the pool. Raising `stop`, cancelling the consumer or
    /// dropping the stream closes the HTTP stream at once, so the server stops generating; the
    /// stream then ends with finish reason `cancelled` (after `stop`) as a local one does.
    func stream<Request: RemoteGenerationRequest>(_ request: Request, options: GenerationOptions, stop: StopSignal) -> AsyncThrowingStream<TokenEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: TokenEvent.self)
        let producer = Task {
            do {
                let summary = try await self.read(request.streaming, constraint: options.constraint, hasStopStrings: !options.stopStrings.isEmpty) {
                    continuation.yield(.token($0))
                }
                continuation.yield(.finished(summary))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        stop.whenRaised { producer.cancel() }
        continuation.onTermination = { _ in producer.cancel() }
        return stream
    }

    /// Sends `request` (with the fields that ask for `constraint`) and hands each token to `emit`
    /// as its chunk arrives; returns the summary, with finish reason `cancelled` when the task was
    /// cancelled.
    private func read<Request: RemoteGenerationRequest>(_ request: Request, constraint: OutputConstraint?, hasStopStrings: Bool,
                                                         emit: (GeneratedToken) -> Void) async throws -> GenerationSummary {
        let clock = ContinuousClock()
        let start = clock.now
        var reader = ChunkReader<Request.Response>(hasStopStrings: hasStopStrings)
        func summary() -> GenerationSummary { reader.summary(start: start, clock: clock) }
        do {
            let index = try await pool.acquire()
            defer { pool.release(index) }
            let endpoint = endpoints[index]
            var body = try JSONEncoder().encode(request)
            if let constraint {
                // A regular expression or choice reaches the server as the grammar it stands for.
                body = ConstraintFields.adding(constraint, gbnf: (try? Grammar.gbnf(for: constraint)) ?? "", to: body, chat: Request.self == ChatCompletionRequest.self)
            }
            let response = try await endpoint.send(.POST, Request.path, body: body, streaming: true)
            do {
                for try await buffer in response.body {
                    for token in try reader.feed(buffer.readableBytesView, at: clock.now, endpoint: endpoint.baseURL) { emit(token) }
                    if reader.isDone { break }
                }
            } catch {
                throw endpoint.failure(error)
            }
            try reader.finish(endpoint: endpoint.baseURL)
            return summary()
        } catch {
            if Task.isCancelled || error is CancellationError {
                var cancelled = summary()
                cancelled.finishReason = .cancelled
                return cancelled
            }
            throw error
        }
    }
}

import Executors
import Foundation
import Hummingbird
import Inference
import Logging
import NIOCore
import OpenAIAPI

/// `lumen serve`: the OpenAI-compatible API over models loaded in this process —
/// `/v1/models`, `/v1/completions` and `/v1/chat/completions` (the model's chat template),
/// streamed as Server-Sent Events or whole. Requests for a model share its session pool, one
/// request per session, waiting their turn in order. A client that disconnects stops its
/// generation within one token. With a key, requests without it get 401; bodies and token
/// counts are bounded; bad requests get a 400 in OpenAI's error shape.
public struct OpenAIServer: Sendable {
    /// The models served; the first is the default.
    let models: [ServedModel]
    /// The key requests must send as a bearer token, if any.
    let apiKey: String?
    /// Receives every generation run, finished or abandoned.
    let record: (@Sendable (ServedGeneration) -> Void)?
    /// The largest request body accepted, in bytes.
    static let maximumBodyBytes = 4 << 20
    /// The most alternatives per token a request may ask for.
    static let maximumAlternatives = 20

    /// A server of `models` (at least one), requiring `apiKey` when given, handing each
    /// generation to `record`.
    public init(models: [ServedModel], apiKey: String?, record: (@Sendable (ServedGeneration) -> Void)? = nil) {
        self.models = models
        self.apiKey = apiKey
        self.record = record
    }

    /// Serves on `host`:`port` (0: any free port) until SIGINT or SIGTERM, calling `listening`
    /// with the base URL once the socket accepts connections.
    public func run(host: String, port: Int, logger: Logger, listening: @escaping @Sendable (String) -> Void) async throws {
        let router = Router()
        router.get("/v1/models") { request, _ in self.respond(request) { () throws(ServerError) in try self.modelList() } }
        router.post("/v1/completions") { request, _ in await self.generate(CompletionRequest.self, request, logger: logger) }
        router.post("/v1/chat/completions") { request, _ in await self.generate(ChatCompletionRequest.self, request, logger: logger) }
        let app = Application(router: router, configuration: .init(address: .hostname(host, port: port), serverName: "lumen"),
                              onServerRunning: { channel in
                                  let bound = channel.localAddress?.port ?? port
                                  let shown = host.contains(":") ? "[\(host)]" : host
                                  listening("http://\(shown):\(bound)/v1")
                              }, logger: logger)
        do {
            try await app.runService()
        } catch let error as IOError {
            throw ListenError(errno: error.errnoCode, host: host, port: port) ?? error
        }
    }

    // MARK: Requests

    private func modelList() throws(ServerError) -> Response {
        try json(ModelList(data: models.map { ModelCard(id: $0.name, created: $0.created, ownedBy: "lumen") }))
    }

    /// Runs `body` after checking the key, turning a refusal into its error response.
    private func respond(_ request: Request, _ body: () throws(ServerError) -> Response) -> Response {
        do {
            try authorize(request)
            return try body()
        } catch {
            return errorResponse(error)
        }
    }

    /// Answers a generation request of type `R`.
    private func generate<R: ServedGenerationRequest>(_ type: R.Type, _ request: Request, logger: Logger) async -> Response {
        do {
            try authorize(request)
            let parsed = try await read(R.self, request)
            let model = try servedModel(parsed.model)
            // Tokenizing (and rendering a chat) takes long for a big prompt: not on the cooperative pool.
            let promptTokens = try await DedicatedThread.run(name: "lumen-tokenize") { () throws(ServerError) in try parsed.promptTokens(for: model) }
            let options = try generationOptions(parsed, promptTokens: promptTokens.count, model: model)
            let job = GenerationJob(model: model, promptTokens: promptTokens, options: options, alternatives: parsed.alternatives ?? 0,
                                    wantsLogprobs: parsed.alternatives != nil, echo: parsed.echoesPrompt, id: (R.self == CompletionRequest.self ? "cmpl-" : "chatcmpl-") + UUID().uuidString,
                                    created: Int(Date().timeIntervalSince1970), logger: logger, prompt: parsed.loggedPrompt,
                                    messages: parsed.loggedMessages, record: record)
            if parsed.stream == true {
                let includeUsage = parsed.streamOptions?.includeUsage == true
                return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: ResponseBody { writer in
                    try await job.stream(R.self, includeUsage: includeUsage) { data in
                        try await writer.write(ByteBuffer(string: "data: " + data + "\n\n"))
                    }
                    try await writer.write(ByteBuffer(string: "data: [DONE]\n\n"))
                    try await writer.finish(nil)
                })
            }
            return try json(try await job.whole(R.self))
        } catch {
            if let refused = error as? ServerError { logger.info("refused (\(refused.status.code)): \(refused.body.error.message)") }
            return errorResponse(error)
        }
    }

    /// The request's body as an `R`, refusing unknown fields, and `n` other than 1.
    private func read<R: ServedGenerationRequest>(_ type: R.Type, _ request: Request) async throws(ServerError) -> R {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: Self.maximumBodyBytes)
        } catch {
            throw .tooLarge(Self.maximumBodyBytes)
        }
        let data = Data(body.readableBytesView)
        let names: Set<String>
        do {
            names = try JSONDecoder().decode(FieldNames.self, from: data).names
        } catch {
            throw .invalid("the body is not a JSON object")
        }
        if let unknown = names.subtracting(R.fieldNames).sorted().first {
            throw .invalid("unknown field '\(unknown)'", param: unknown)
        }
        let parsed: R
        do {
            parsed = try JSONDecoder().decode(R.self, from: data)
        } catch {
            throw .invalid("malformed request: \(DecodingFailure.describe(error))")
        }
        if let n = parsed.n, n != 1 { throw .invalid("only n = 1 is supported, got \(n)", param: "n") }
        if parsed.echoesPrompt, parsed.stream == true { throw .invalid("echo is supported for whole answers, not streams", param: "echo") }
        return parsed
    }

    /// The served model named `name` (nil: the first).
    private func servedModel(_ name: String?) throws(ServerError) -> ServedModel {
        guard let name else { return models[0] }
        guard let model = models.first(where: { $0.name == name }) else { throw .unknownModel(name, served: models.map(\.name)) }
        return model
    }

    /// Generation options from the request's fields, each checked; `max_tokens` defaults to and
    /// is capped by the room left in the context.
    private func generationOptions<R: ServedGenerationRequest>(_ request: R, promptTokens: Int, model: ServedModel) throws(ServerError) -> GenerationOptions {
        let room = model.contextLength - promptTokens
        guard room > 0 else {
            throw .invalid("the prompt is \(promptTokens) tokens; the context holds \(model.contextLength)", param: "prompt")
        }
        let fields = request.sampling
        var options = GenerationOptions()
        func check(_ ok: Bool, _ field: String, _ rule: String, _ value: some CustomStringConvertible) throws(ServerError) {
            if !ok { throw .invalid("\(field) must be \(rule), got \(value)", param: field) }
        }
        if let limit = request.tokenLimit {
            try check(limit >= 0, "max_tokens", "0 or more", limit)
            options.maxTokens = min(limit, room)
        } else {
            options.maxTokens = room
        }
        if let value = fields.temperature { try check(value >= 0 && value.isFinite, "temperature", "0 or more", value); options.sampling.temperature = Float(value) }
        if let value = fields.topP { try check((0...1).contains(value), "top_p", "in 0…1", value); options.sampling.topP = Float(value) }
        if let value = fields.topK { try check(value >= 0, "top_k", "0 or more", value); options.sampling.topK = value }
        if let value = fields.minP { try check((0...1).contains(value), "min_p", "in 0…1", value); options.sampling.minP = Float(value) }
        if let value = fields.repeatPenalty { try check(value > 0 && value.isFinite, "repeat_penalty", "positive", value); options.sampling.repeatPenalty = Float(value) }
        options.sampling.seed = fields.seed.map { UInt64(bitPattern: Int64($0)) } ?? UInt64.random(in: 0...UInt64(Int32.max))
        if let stops = fields.stop?.strings {
            try check(stops.count <= 16 && stops.allSatisfy { !$0.isEmpty }, "stop", "at most 16 non-empty strings", stops.count)
            options.stopStrings = stops
        }
        if let alternatives = request.alternatives {
            try check((0...Self.maximumAlternatives).contains(alternatives), "logprobs", "in 0…\(Self.maximumAlternatives)", alternatives)
            if alternatives > 0 { options.recordedLogits = options.maxTokens }
        }
        return options
    }

    /// Checks the bearer token, comparing in constant time.
    private func authorize(_ request: Request) throws(ServerError) {
        guard let apiKey else { return }
        let given = Array((request.headers[.authorization] ?? "").utf8)
        let expected = Array(("Bearer " + apiKey).utf8)
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in expected.indices {
            difference |= expected[index] ^ (index < given.count ? given[index] : 0)
        }
        if difference != 0 { throw .unauthorized }
    }

    // MARK: Responses

    private func json(_ value: some Encodable) throws(ServerError) -> Response {
        do {
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(data: try JSONEncoder().encode(value))))
        } catch {
            throw .failed("cannot encode the answer: \(error)")
        }
    }

    private func errorResponse(_ error: any Error) -> Response {
        let failure = error as? ServerError ?? .failed("\(error)")
        let body = (try? JSONEncoder().encode(failure.body)) ?? Data()
        var headers: HTTPFields = [.contentType: "application/json"]
        if failure.status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        return Response(status: failure.status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(data: body)))
    }
}

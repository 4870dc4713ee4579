import Executors
import Foundation
import GenerationTypes
import Grammars
import Hummingbird
import HummingbirdCore
import Inference
import Logging
import NIOCore
import OpenAIAPI
import OrderedJSON
import ServiceLifecycle

/// `lumen serve`: the OpenAI-compatible API over models loaded in this process —
/// `/v1/models`, `/v1/completions` and `/v1/chat/completions` (the model's chat template),
/// streamed as Server-Sent Events or whole, and `/v1/embeddings` (each model's pooling). Requests for a model share its session pool, one
/// request per session, waiting their turn in order. With a key, requests without it get 401;
/// bodies and token counts are bounded; bad requests get a 400 in OpenAI's error shape.
///
/// Under faults (`ServerLimits`): a client that disconnects stops its generation within one
/// token, or leaves the queue if it was waiting; connections idle (or slow to send a request)
/// past the timeout are closed; connections, queue length and queue time are bounded, and past
/// them clients get 503 with `Retry-After`. The first SIGTERM or SIGINT stops new connections
/// and gives running requests a grace period before cancelling them; a second exits at once.
public struct OpenAIServer: Sendable {
    /// The models served; the first is the default.
    let models: [ServedModel]
    /// The key requests must send as a bearer token, if any.
    let apiKey: String?
    /// Receives every generation run, finished or abandoned.
    let record: (@Sendable (ServedGeneration) -> Void)?
    /// Timeouts and bounds.
    let limits: ServerLimits
    /// Which web pages may call it.
    let crossSite: CrossSitePolicy
    /// The control vectors and SAEs requests steer with, by name.
    let steering: SteeringLibrary
    /// Set by the first signal.
    private let shutdown = ServerShutdown()
    /// The grammars requests asked for, compiled.
    private let grammars: GrammarCache
    /// What `GET /metrics` shows.
    private let metrics: ServerMetrics
    /// The largest request body accepted, in bytes.
    static let maximumBodyBytes = 4 << 20
    /// The most alternatives per token a request may ask for.
    static let maximumAlternatives = 20
    /// The most choices (`n`) a request may ask for: each is a generation of its own.
    static let maximumChoices = 16
    /// The most inputs one embeddings request may give.
    static let maximumEmbeddingInputs = 256
    /// How long after the shutdown's grace connections stay open for the cancelled requests' answers.
    static let answerTimeAfterGrace = Duration.seconds(3)

    /// A server of `models` (at least one), requiring `apiKey` when given, within `limits`,
    /// answering web pages as `crossSite` allows, steering requests with `steering`'s control
    /// vectors and SAEs when they name them, handing each generation to `record`.
    public init(models: [ServedModel], apiKey: String?, limits: ServerLimits = ServerLimits(), crossSite: CrossSitePolicy = CrossSitePolicy(),
                steering: SteeringLibrary = SteeringLibrary(), record: (@Sendable (ServedGeneration) -> Void)? = nil) {
        self.models = models
        self.steering = steering
        self.apiKey = apiKey
        self.limits = limits
        self.crossSite = crossSite
        self.record = record
        grammars = GrammarCache(limits: limits.grammar)
        metrics = ServerMetrics(models: models)
    }

    /// Serves on `host`:`port` (0: any free port) until SIGINT or SIGTERM, calling `listening`
    /// with the base URL once the socket accepts connections.
    public func run(host: String, port: Int, logger: Logger, listening: @escaping @Sendable (String) -> Void) async throws {
        let router = Router()
        router.add(middleware: CrossSiteMiddleware(policy: crossSite, keyed: apiKey != nil) { refusal in self.errorResponse(refusal) })
        for path in ["/v1/models", "/v1/completions", "/v1/chat/completions", "/v1/embeddings", "/control-vectors", "/saes", "/lora-adapters"] {
            // Preflights, which the middleware answers.
            router.on(RouterPath(path), method: .options) { _, _ in Response(status: .noContent) }
        }
        router.get("/v1/models") { request, _ in self.respond(request) { () throws(ServerError) in try self.modelList() } }
        router.get("/control-vectors") { request, _ in self.respond(request) { () throws(ServerError) in try self.json(self.steering.vectorList) } }
        router.get("/saes") { request, _ in self.respond(request) { () throws(ServerError) in try self.json(self.steering.saeList) } }
        // llama-server's: the default model's adapters, and the scales of requests that name none.
        router.get("/lora-adapters") { request, _ in self.respond(request) { () throws(ServerError) in try self.json(self.models[0].adapters.cards) } }
        router.post("/lora-adapters") { request, _ in await self.cancellable(request, logger: logger) { body in try await self.setAdapterScales(body, logger: logger) } }
        router.post("/v1/completions") { request, _ in await self.generate(CompletionRequest.self, request, logger: logger) }
        router.post("/v1/chat/completions") { request, _ in await self.generate(ChatCompletionRequest.self, request, logger: logger) }
        router.post("/v1/embeddings") { request, _ in await self.cancellable(request, logger: logger) { body in try await embed(body, logger: logger) } }
        // For Prometheus and a fleet's probes, without the key (as vLLM's and llama-server's).
        router.get("/metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: ResponseBody(byteBuffer: ByteBuffer(bytes: self.metrics.exposition())))
        }
        router.get("/health") { _, _ in try self.json(["status": "ok"]) }
        // Not ready from the first signal on, so a load balancer stops sending requests before the drain.
        router.get("/ready") { _, _ in
            self.shutdown.hasBegun ? try self.json(["status": "draining"], status: .serviceUnavailable) : try self.json(["status": "ready"])
        }
        let connections = ConnectionLimit(configured: limits.maximumConnections, logger: logger)
        let http = HTTP1Channel.Configuration(additionalChannelHandlers: [ConnectionLimitHandler(limit: connections)],
                                              idleTimeout: TimeAmount(limits.idleTimeout))
        let app = Application(router: router, server: .http1(configuration: http), configuration: .init(address: .hostname(host, port: port), serverName: "lumen"),
                              onServerRunning: { channel in
                                  let bound = channel.localAddress?.port ?? port
                                  let shown = host.contains(":") ? "[\(host)]" : host
                                  listening("http://\(shown):\(bound)/v1")
                              }, logger: logger)
        var configuration = ServiceGroupConfiguration(services: [app], logger: logger)
        // The server cancels running requests itself when the grace ends; this leaves their
        // answers (a 503, a stream's last event) time to be written before connections close.
        configuration.maximumGracefulShutdownDuration = limits.shutdownGrace + Self.answerTimeAfterGrace
        let group = ServiceGroup(configuration: configuration)
        let (shutdown, grace, delay) = (self.shutdown, limits.shutdownGrace, limits.drainDelay)
        let signals = SignalListener(signals: [SIGINT, SIGTERM]) { number in
            guard shutdown.begin() else {
                logger.notice("second signal: exiting now")
                exit(128 + number)
            }
            // /ready answers 503 from now on; new requests are still taken for the drain delay.
            if delay > .zero { logger.notice("not ready: draining in \(delay) (a second signal exits at once)") }
            Task {
                try? await Task.sleep(for: delay)
                logger.notice("shutting down: no new connections; running requests are cancelled in \(grace) (a second signal exits at once)")
                await group.triggerGracefulShutdown()
                try? await Task.sleep(for: grace)
                shutdown.cancelRunning()
            }
        }
        defer { signals.cancel() }
        do {
            try await group.run()
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

    /// Answers a generation request of type `R`. From reading its body to its whole answer (or
    /// the start of its stream), the request is cancelled if its client closes the connection;
    /// a stream's generation then stops when a write fails. The connection closes after the answer.
    private func generate<R: ServedGenerationRequest>(_ type: R.Type, _ request: Request, logger: Logger) async -> Response {
        await cancellable(request, logger: logger) { body in try await answer(R.self, body: body, logger: logger) }
    }

    /// Checks the key, then runs `answer` on the request's body, cancelled if the client closes
    /// the connection first; a failure becomes its error response, logged. The connection
    /// closes after the answer.
    private func cancellable(_ request: Request, logger: Logger, _ answer: @escaping @Sendable (RequestBody) async throws -> Response) async -> Response {
        do {
            try authorize(request)
            return try await request.body.consumeWithCancellationOnInboundClose { body in
                try await shutdown.cancellingWhenGraceEnds { try await answer(body) }
            }
        } catch {
            let refusal = failure(error)
            if refusal.status == .internalServerError {
                logger.error("failed: \(error)")
            } else if !(error is CancellationError) {
                // A cancelled request is logged by its job.
                logger.info("refused (\(refusal.status.code)): \(refusal.body.error.message)")
            }
            return errorResponse(refusal, closing: true)
        }
    }

    /// The answer to a generation request of type `R` whose body is `body`: whole, or a stream.
    private func answer<R: ServedGenerationRequest>(_ type: R.Type, body: RequestBody, logger: Logger) async throws -> Response {
        let arrived = ContinuousClock.now
        let (parsed, constraint) = try await read(R.self, body)
        let model = try servedModel(parsed.model)
        // Tokenizing (and rendering a chat) takes long for a big prompt: not on the cooperative pool.
        let (prompt, logitBias) = try await DedicatedThread.run(name: "lumen-tokenize") { () throws(ServerError) in
            (try parsed.prompt(for: model), try Self.logitBias(parsed.sampling.logitBias, model: model))
        }
        guard !prompt.tokens.isEmpty else {
            throw ServerError.invalid("the prompt is empty, and this model adds no BOS token: give at least one token", param: R.promptField)
        }
        let steered = try steering.steering(parsed.steering, model: model.model)
        let adapters = try model.adapters.adapters(for: parsed.steering.lora)
        var options = try generationOptions(parsed, promptTokens: prompt.tokens.count, model: model)
        options.sampling.logitBias = logitBias
        options.shownTokens = prompt.shownTokens
        var grammar: (grammar: Grammar, field: String)?
        let toolCallConstraint = try parsed.toolCallConstraint(for: prompt).map { (constraint: $0, field: "tool_choice") }
        if let (constraint, field) = toolCallConstraint ?? constraint {
            do {
                let compiled = try await grammars.grammar(for: constraint, model: model)
                if compiled.duration > .milliseconds(100) { logger.info("compiled the request's \(field) in \(compiled.duration)") }
                grammar = (compiled.grammar, field)
            } catch let error as GrammarError {
                throw ServerError.invalid("\(error)", param: field)
            }
            options.constraint = constraint
        }
        let job = GenerationJob(model: model, prompt: prompt, options: options, hooks: steered.hooks, adapters: adapters, steering: steered.logged,
                                interventions: steered.interventions,
                                choices: parsed.n ?? 1, grammar: grammar, alternatives: parsed.alternatives ?? 0,
                                wantsLogprobs: parsed.alternatives != nil, echo: parsed.echoesPrompt, id: (R.self == CompletionRequest.self ? "cmpl-" : "chatcmpl-") + UUID().uuidString,
                                created: Int(Date().timeIntervalSince1970), logger: logger, loggedPrompt: parsed.loggedPrompt,
                                messages: parsed.loggedMessages, record: record, limits: limits, shutdown: shutdown,
                                metrics: metrics.metrics(of: model), arrived: arrived)
        let lease = try await job.lease()
        guard parsed.stream == true else { return try json(try await job.whole(R.self, on: lease), closing: true) }
        let includeUsage = parsed.streamOptions?.includeUsage == true
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache", .connection: "close"], body: ResponseBody { writer in
            defer { lease.release() }
            do {
                try await job.stream(R.self, on: lease, includeUsage: includeUsage) { data in
                    try await writer.write(ByteBuffer(string: "data: " + data + "\n\n"))
                }
                try await writer.write(ByteBuffer(string: "data: [DONE]\n\n"))
            } catch {
                // Cut short: a last event says why, if the connection still takes it.
                let event = (try? JSONEncoder().encode(failure(error).body)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
                try? await writer.write(ByteBuffer(string: "data: " + event + "\n\n"))
            }
            try await writer.finish(nil)
        })
    }

    /// The request's body as an `R`, refusing unknown fields, and `n` outside 1…`maximumChoices`.
    /// The constraint on the output its `response_format`, `grammar` or `json_schema` asks for
    /// comes with it, and the field that asked (refused beside tools the model may call).
    private func read<R: ServedGenerationRequest>(_ type: R.Type, _ body: RequestBody) async throws(ServerError)
        -> (request: R, constraint: (constraint: OutputConstraint, field: String)?) {
        let data = Data(try await collect(body).readableBytesView)
        var parsed = try decode(R.self, knowing: R.fieldNames, from: data)
        if let n = parsed.n, !(1...Self.maximumChoices).contains(n) { throw .invalid("n must be in 1…\(Self.maximumChoices), got \(n)", param: "n") }
        if parsed.echoesPrompt, parsed.stream == true { throw .invalid("echo is supported for whole answers, not streams", param: "echo") }
        do throws(FieldFailure) {
            try parsed.readOrderedFields(from: data)
            let constraint = try ConstraintFields.constraint(in: data)
            if let tools = parsed.tools, tools.choice != .none, let (_, field) = constraint {
                throw FieldFailure(message: "'\(field)' constrains the output, which tools may call instead: give one, or tool_choice \"none\"", field: field)
            }
            return (parsed, constraint)
        } catch {
            throw .invalid(error.message, param: error.field)
        }
    }

    /// `POST /lora-adapters`: a JSON array of `{"id", "scale"}` sets the scales of the default
    /// model's adapters for requests that name none (those not in it get 0), as llama-server's.
    private func setAdapterScales(_ body: RequestBody, logger: Logger) async throws -> Response {
        let data = Data(try await collect(body).readableBytesView)
        let entries: [LoRAScale]
        do {
            entries = try JSONDecoder().decode([LoRAScale].self, from: data)
        } catch {
            let failure = DecodingFailure.describe(error, decoding: [LoRAScale].self, from: data)
            throw ServerError.invalid("the body must be a JSON array of {\"id\": an adapter's id, \"scale\": a number}: \(failure.message)")
        }
        try models[0].adapters.setScales(entries)
        logger.info("LoRA adapter scales set: \(models[0].adapters.cards.map { "\($0.id): \($0.scale)" }.joined(separator: ", "))")
        return try json(["success": true])
    }

    /// The request's body as a `T`, refusing fields not in `fieldNames`.
    private func decode<T: Decodable>(_ type: T.Type, knowing fieldNames: Set<String>, from body: RequestBody) async throws(ServerError) -> T {
        try decode(T.self, knowing: fieldNames, from: Data(try await collect(body).readableBytesView))
    }

    /// The JSON object `data` as a `T`, refusing fields not in `fieldNames`.
    private func decode<T: Decodable>(_ type: T.Type, knowing fieldNames: Set<String>, from data: Data) throws(ServerError) -> T {
        let names: Set<String>
        do {
            names = try JSONDecoder().decode(FieldNames.self, from: data).names
        } catch {
            throw Self.notAnObject(data)
        }
        if let unknown = names.subtracting(fieldNames).sorted().first {
            throw .invalid("unknown field '\(unknown)'", param: unknown)
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            if let parsed = try? OrderedJSON(parsing: String(decoding: data, as: UTF8.self)), let refusal = Self.nonFiniteNumber(in: parsed) { throw refusal }
            let failure = DecodingFailure.describe(error, decoding: T.self, from: data)
            throw .invalid("malformed request: \(failure.message)", param: failure.field)
        }
    }

    /// Why `data` is not a JSON object the server can read: where its syntax breaks, or the field
    /// holding a number too large for a double.
    private static func notAnObject(_ data: Data) -> ServerError {
        let parsed: OrderedJSON
        do {
            parsed = try OrderedJSON(parsing: String(decoding: data, as: UTF8.self))
        } catch {
            return .invalid("the body is not valid JSON: line \(error.line), column \(error.column): \(error.reason)")
        }
        guard case .object = parsed else { return .invalid("the body is not a JSON object") }
        return nonFiniteNumber(in: parsed) ?? .invalid("the body is not a JSON object")
    }

    /// The refusal of a body holding a number too large for a double (`1e309`), naming its
    /// field, which Foundation's reader refuses without naming it; nil when there is none.
    private static func nonFiniteNumber(in body: OrderedJSON) -> ServerError? {
        guard let (path, text) = body.firstNonFiniteNumber() else { return nil }
        return .invalid("field '\(path)' must be a finite number, got \(text)", param: String(path.prefix { $0 != "." && $0 != "[" }))
    }

    /// The answer to an embeddings request whose body is `body`: each input's embedding, pooled
    /// as the model is served (`--pooling`) and normalized, computed on one leased session.
    private func embed(_ body: RequestBody, logger: Logger) async throws -> Response {
        let request = try await decode(EmbeddingRequest.self, knowing: EmbeddingRequest.fieldNames, from: body)
        let model = try servedModel(request.model)
        let width = model.model.configuration.embeddingLength
        let format = request.encodingFormat ?? "float"
        guard format == "float" || format == "base64" else {
            throw ServerError.invalid("encoding_format must be \"float\" or \"base64\", got \(format.debugDescription)", param: "encoding_format")
        }
        if let dimensions = request.dimensions, dimensions != width {
            throw ServerError.invalid("dimensions must be the model's \(width): vectors are not shortened", param: "dimensions")
        }
        guard (1...Self.maximumEmbeddingInputs).contains(request.input.count) else {
            throw ServerError.invalid("input must hold 1 to \(Self.maximumEmbeddingInputs) items, got \(request.input.count)", param: "input")
        }
        // Tokenizing takes long for big inputs: not on the cooperative pool.
        let input = request.input
        let inputs = try await DedicatedThread.run(name: "lumen-tokenize") { () throws(ServerError) -> [[Int32]] in
            try Self.tokens(of: input, for: model.model)
        }
        for (index, tokens) in inputs.enumerated() {
            if tokens.isEmpty { throw ServerError.invalid("input \(index) is empty, and this model adds no BOS token", param: "input") }
            if tokens.count > model.contextLength {
                throw ServerError.invalid("input \(index) is \(tokens.count) tokens; the context holds \(model.contextLength)", param: "input")
            }
        }
        let total = inputs.reduce(0) { $0 + $1.count }
        guard total <= limits.maximumEmbeddingTokens else {
            throw ServerError.invalid("the inputs are \(total) tokens together; one request may embed at most \(limits.maximumEmbeddingTokens) (--max-embedding-tokens)",
                                      param: "input")
        }
        let id = "embd-" + UUID().uuidString
        logger.info("\(id) started: \(inputs.count) inputs, \(inputs.reduce(0) { $0 + $1.count }) tokens")
        let lease = try await model.lease(limits: limits, logger: logger, id: id, shutdown: shutdown)
        defer { lease.release() }
        var data: [EmbeddingList.Embedding] = []
        for (index, tokens) in inputs.enumerated() {
            let vector: [Float]
            do {
                vector = try await lease.session.embedding(tokens, pooling: model.pooling, hooks: model.hooks)
            } catch {
                guard Task.isCancelled else { throw error }
                logger.info("\(id) stopped after \(index) of \(inputs.count) inputs (\(shutdown.interruption))")
                throw CancellationError()
            }
            data.append(EmbeddingList.Embedding(index: index, embedding: .init(vector, base64: format == "base64")))
        }
        return try json(EmbeddingList(data: data, model: model.name, usage: .init(tokens: inputs.reduce(0) { $0 + $1.count })), closing: true)
    }

    /// The token ids of each of an embeddings request's inputs for `model`, refusing ids outside
    /// its vocabulary.
    private static func tokens(of input: EmbeddingRequest.Input, for model: LanguageModel) throws(ServerError) -> [[Int32]] {
        let vocabulary = model.configuration.vocabularySize
        switch input {
        case .texts(let texts):
            return texts.map { model.tokenizer.encode($0) }
        case .tokens(let lists):
            var result: [[Int32]] = []
            for list in lists {
                if let outside = list.first(where: { !(0..<vocabulary).contains($0) }) {
                    throw .invalid("token id \(outside) is outside the vocabulary of \(vocabulary)", param: "input")
                }
                result.append(list.map(Int32.init))
            }
            return result
        }
    }

    /// The request's body, refused when larger than the server accepts or when it has not all
    /// arrived within the idle timeout (a client trickling it byte by byte).
    private func collect(_ body: RequestBody) async throws(ServerError) -> ByteBuffer {
        let timeout = limits.idleTimeout
        let outcome = await withTaskGroup(of: Result<ByteBuffer, ServerError>.self) { group in
            group.addTask {
                do {
                    return .success(try await body.collect(upTo: Self.maximumBodyBytes))
                } catch {
                    return .failure(.tooLarge(Self.maximumBodyBytes))
                }
            }
            group.addTask {
                // Cancelled when the body arrives first: then this result is never read.
                try? await Task.sleep(for: timeout)
                return .failure(.timedOut(timeout))
            }
            defer { group.cancelAll() }
            return await group.next() ?? .failure(.timedOut(timeout))
        }
        return try outcome.get()
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
        if let value = fields.repeatLastN { try check(value >= 0, "repeat_last_n", "0 or more", value); options.sampling.repeatWindow = min(value, model.contextLength) }
        if let value = fields.frequencyPenalty { try check(value.isFinite, "frequency_penalty", "a finite number", value); options.sampling.frequencyPenalty = Float(value) }
        if let value = fields.presencePenalty { try check(value.isFinite, "presence_penalty", "a finite number", value); options.sampling.presencePenalty = Float(value) }
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

    /// The biases `field` asks for, by token id over `model`'s vocabulary, as llama-server reads
    /// them: a text's tokens (no BOS, special tokens as text) each get its bias, and the biases of
    /// a token named twice add up. An id outside the vocabulary is refused, naming it.
    private static func logitBias(_ field: LogitBiasField?, model: ServedModel) throws(ServerError) -> [Int32: Float] {
        guard let field else { return [:] }
        let tokenizer = model.model.tokenizer, size = tokenizer.vocabulary.count
        var biases: [Int32: Float] = [:]
        for entry in field.entries {
            guard entry.bias == -.infinity || Float(entry.bias).isFinite else {
                throw .invalid("logit_bias's biases must be within ±\(Float.greatestFiniteMagnitude) or false, got \(entry.bias)", param: "logit_bias")
            }
            let tokens: [Int32]
            switch entry.token {
            case .id(let id):
                guard (0..<size).contains(id) else {
                    throw .invalid("logit_bias names token \(id), which is not in the model's vocabulary of \(size) (0…\(size - 1))", param: "logit_bias")
                }
                tokens = [Int32(id)]
            case .text(let text):
                tokens = tokenizer.encode(text, addSpecial: false, parseSpecial: false)
            }
            for token in tokens { biases[token, default: 0] += Float(entry.bias) }
        }
        return biases
    }

    /// Checks the bearer token, comparing the key in constant time; the scheme's name is
    /// case-insensitive (RFC 9110, 11.1), and blanks may surround the key.
    private func authorize(_ request: Request) throws(ServerError) {
        guard let apiKey else { return }
        let header = (request.headers[.authorization] ?? "").trimmingCharacters(in: .whitespaces)
        let scheme = header.prefix { $0 != " " }
        guard scheme.lowercased() == "bearer" else { throw .unauthorized }
        let given = Array(header.dropFirst(scheme.count).trimmingCharacters(in: .whitespaces).utf8)
        let expected = Array(apiKey.utf8)
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in expected.indices {
            difference |= expected[index] ^ (index < given.count ? given[index] : 0)
        }
        if difference != 0 { throw .unauthorized }
    }

    // MARK: Responses

    /// `value` as JSON; `closing`: telling the client the connection closes after it.
    private func json(_ value: some Encodable, status: HTTPResponse.Status = .ok, closing: Bool = false) throws(ServerError) -> Response {
        do {
            var headers: HTTPFields = [.contentType: "application/json"]
            if closing { headers[.connection] = "close" }
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(data: try JSONEncoder().encode(value))))
        } catch {
            throw .failed("cannot encode the answer: \(error)")
        }
    }

    /// `error` as the server answers it: its own refusals as they are; a cancellation as 503; a
    /// full queue or a wait too long as 503 with `Retry-After`; any other failure as 500, with
    /// the served models' paths replaced by their names (no server path reaches a client).
    private func failure(_ error: any Error) -> ServerError {
        switch error {
        case let refusal as ServerError:
            return refusal
        case is CancellationError:
            return .unavailable("the request was cancelled: \(shutdown.interruption)", retry: shutdown.hasBegun)
        case FairPool.Refusal.queueFull(let waiting):
            return .unavailable("\(waiting) requests are already waiting for a session, the most this server queues; retry shortly", retry: true)
        case FairPool.Refusal.waitedTooLong(let limit):
            return .unavailable("no session came free within \(limit); retry shortly", retry: true)
        default:
            var message = "\(error)"
            for model in models { message = message.replacingOccurrences(of: model.model.gguf.path, with: model.name) }
            return .failed(message)
        }
    }

    /// The error's response; `closing`: telling the client the connection closes after it.
    private func errorResponse(_ error: any Error, closing: Bool = false) -> Response {
        let failure = failure(error)
        let body = (try? JSONEncoder().encode(failure.body)) ?? Data()
        var headers: HTTPFields = [.contentType: "application/json"]
        if failure.status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        if failure.retries { headers[.retryAfter] = "\(ServerLimits.retryAfterSeconds)" }
        if closing { headers[.connection] = "close" }
        return Response(status: failure.status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(data: body)))
    }
}

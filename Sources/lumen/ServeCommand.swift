import ArgumentParser
import Executors
import Foundation
import Grammars
import GenerationTypes
import Inference
import LumenKit
import ModelBuiltins
import RunLog
import Serve
import SparseAutoencoders

/// `lumen serve MODEL...`: the OpenAI-compatible API over local models, for any client that
/// speaks it (the `openai` package, LangChain, another Lumen's `connect`).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve models over the OpenAI-compatible API (/v1/models, /v1/completions, /v1/chat/completions, /v1/embeddings).",
        discussion: """
        Each MODEL is served under its file name without .gguf (the first is the default). \
        Streaming (Server-Sent Events) and whole answers, logprobs/top_logprobs, max_tokens, \
        temperature, top_p, top_k, min_p, repeat_penalty, seed, stop and echo (the prompt scored, \
        in whole answers). A reasoning model's thinking comes back as reasoning_content, \
        as llama-server gives it (reasoning_format none leaves it in the content; \
        chat_template_kwargs pass variables such as enable_thinking to the template). \
        /v1/embeddings pools each input as --pooling says and normalizes it, \
        as llama-server --embeddings does. --control-vector… (llama.cpp's flags) steer every \
        request to every served model, each vector checked against each model at start. \
        --control-vector-file NAME=FILE and --sae NAME=PATH load control vectors and sparse \
        autoencoders a request may name: "control_vectors": {"NAME": scale} (with \
        "control_vector_layer_range": [first, last]) steers that request alone, "features": \
        {"NAME": {"index": value}} sets those features at the SAE's hook (its error term kept); \
        GET /control-vectors and GET /saes list them. Steered requests decode together with \
        the others. \
        Concurrent requests decode together: each of a model's --instances sessions runs up to \
        --parallel sequences in one batch (one forward pass reads the weights once for all of \
        them; a new request joins at the next step); more requests wait their turn in order. \
        Each sequence's keys and values take memory as its context fills, up to the size printed \
        at start. Listens on loopback unless \
        --host says otherwise; with --api-key-env VAR, requests must send that variable's value \
        as a bearer token. \
        Under faults: a client that disconnects stops its generation within one token (or leaves \
        the queue); connections idle or slow to send a request for --timeout-idle are closed; \
        past --max-connections, --max-queue waiting requests or --max-queue-wait, clients get 503 \
        with Retry-After. GET /health answers while the process runs, GET /ready until the first \
        SIGINT or SIGTERM, and GET /metrics gives Prometheus' text format (vLLM's request and \
        cache gauges a Kubernetes inference gateway routes by, and Lumen's own), all three without \
        the key. The first SIGINT or SIGTERM turns /ready to 503; after --drain-delay new \
        connections stop, and running requests are cancelled after --shutdown-grace; a second \
        signal exits at once.
        """
    )

    @ArgumentParser.Argument(help: "GGUF models: paths, or names found as load() finds them.")
    var models: [String]

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(name: .customLong("chat-template-file"), help: ArgumentHelp("A Jinja chat template file every served model uses instead of its own.", valueName: "file"))
    var chatTemplateFile: String?

    @Option(parsing: .unconditional, help: "The port (0: any free port; the URL is printed).")
    var port = 8080

    @Option(parsing: .unconditional, help: "Sessions per model, each with its own threads.")
    var instances = 1

    @Option(name: [.customLong("np", withSingleDash: true), .customLong("parallel")], parsing: .unconditional,
            help: ArgumentHelp("Sequences each session decodes together (llama-server's -np): requests served at once.", valueName: "N"))
    var parallel = ModelSession.defaultSequences

    @Option(name: .customLong("ctx"), parsing: .unconditional, help: "Context length of each sequence (default: the model's).")
    var contextLength: Int?

    @Option(name: [.customShort("t"), .long], parsing: .unconditional, help: "Threads per session.")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @Option(name: .customLong("api-key-env"), help: "An environment variable holding the key clients must send (never printed).")
    var apiKeyVariable: String?

    @Option(name: .customLong("timeout-idle"), parsing: .unconditional, help: "Seconds a connection may be idle, or slow to send its request, before it is closed.")
    var idleTimeout = ServerLimits().idleTimeout.seconds

    @Option(name: .customLong("max-connections"), parsing: .unconditional, help: "Connections open at once; more get 503 (lowered to what the descriptor limit allows).")
    var maximumConnections = ServerLimits().maximumConnections

    @Option(name: .customLong("max-queue"), parsing: .unconditional, help: "Requests waiting for a session of one model; more get 503 with Retry-After.")
    var maximumQueued = ServerLimits().maximumQueued

    @Option(name: .customLong("max-queue-wait"), parsing: .unconditional, help: "Seconds a request may wait for a session before it gets 503 with Retry-After.")
    var maximumWait = ServerLimits().maximumWait.seconds

    @Option(name: .customLong("drain-delay"), parsing: .unconditional,
            help: "Seconds after SIGINT or SIGTERM during which requests are still taken while /ready answers 503, before the shutdown starts.")
    var drainDelay = ServerLimits().drainDelay.seconds

    @Option(name: .customLong("shutdown-grace"), parsing: .unconditional, help: "Seconds running requests may go on after the drain delay before they are cancelled.")
    var shutdownGrace = ServerLimits().shutdownGrace.seconds

    @Option(name: .customLong("max-embedding-tokens"), parsing: .unconditional,
            help: "Tokens one /v1/embeddings request may ask to embed, all its inputs together; more get 400.")
    var maximumEmbeddingTokens = ServerLimits().maximumEmbeddingTokens

    @Option(name: .customLong("grammar-max-nesting"), parsing: .unconditional, help: "How deep a request's grammar may nest groups; deeper gets 400.")
    var grammarNesting = GrammarLimits.standard.nesting

    @Option(name: .customLong("grammar-max-rules"), parsing: .unconditional,
            help: "Rules a request's grammar (or JSON schema) may have, with those its groups and repetitions add; more gets 400.")
    var grammarRules = GrammarLimits.standard.rules

    @Option(name: .customLong("grammar-max-alternatives"), parsing: .unconditional, help: "Alternatives one rule of a request's grammar may have; more gets 400.")
    var grammarAlternatives = GrammarLimits.standard.alternatives

    @Option(name: .customLong("grammar-max-symbols"), parsing: .unconditional,
            help: "Symbols a request's grammar may have, repetitions rewritten; more gets 400.")
    var grammarSymbols = GrammarLimits.standard.symbols

    @Option(name: .customLong("cors-origin"),
            help: ArgumentHelp("An origin (scheme://host[:port]) whose web pages may call the API from a browser; repeatable; * allows any.", valueName: "origin"))
    var corsOrigins: [String] = []

    @Option(help: ArgumentHelp("How /v1/embeddings pools a text's hidden states (default: as the file declares, else mean).", valueName: "mean|cls|last"))
    var pooling: Pooling?

    @OptionGroup(title: "Control vectors (added to every served model's forward passes, each checked against it)") var controlVectors: ControlVectorArguments

    @Option(name: .customLong("control-vector-file"),
            help: ArgumentHelp("A control vector a request may steer with by name (\"control_vectors\": {\"NAME\": scale}), loaded but not applied; repeatable.",
                               valueName: "name=file"))
    var namedVectors: [String] = []

    @Option(name: .customLong("sae"),
            help: ArgumentHelp("A sparse autoencoder (a SAELens folder, or Gemma Scope's params.safetensors) whose features a request may set by name (\"features\": {\"NAME\": {\"index\": value}}); repeatable.",
                               valueName: "name=path"))
    var namedSAEs: [String] = []

    @OptionGroup(title: "LoRA adapters (of the one model served; GET and POST /lora-adapters, a request's \"lora\" field)") var lora: LoRAArguments

    @OptionGroup(title: "KV cache (of every served model)") var cache: CacheTypeArguments

    @Flag(name: .customLong("lora-init-without-apply"),
          help: "Load the adapters at scale 0: requests apply them with their \"lora\" field, or POST /lora-adapters sets their scales.")
    var loraInitWithoutApply = false

    @OptionGroup var global: GlobalOptions

    /// The limits the options set.
    var limits: ServerLimits {
        var limits = ServerLimits()
        limits.idleTimeout = .milliseconds(Int64(idleTimeout * 1000))
        limits.maximumConnections = maximumConnections
        limits.maximumQueued = maximumQueued
        limits.maximumWait = .milliseconds(Int64(maximumWait * 1000))
        limits.drainDelay = .milliseconds(Int64(drainDelay * 1000))
        limits.shutdownGrace = .milliseconds(Int64(shutdownGrace * 1000))
        limits.maximumEmbeddingTokens = maximumEmbeddingTokens
        limits.grammar.nesting = grammarNesting
        limits.grammar.rules = grammarRules
        limits.grammar.alternatives = grammarAlternatives
        limits.grammar.symbols = grammarSymbols
        return limits
    }

    /// Writes each served generation to `log` as a run of `lumen serve`, its options keeping the
    /// control vectors it was steered with and the SAE features it set.
    static func recorder(_ log: RunLog) -> @Sendable (ServedGeneration) -> Void {
        { served in
            let model = RunModel(served.model.model, name: served.model.name)
            log.record(RunRecord(generationAt: "lumen serve", origin: RunOrigin(frontEnd: "serve"), model: model, prompt: served.prompt,
                                 messages: served.messages, tokens: served.tokens, summary: served.summary, options: served.options,
                                 interrupted: served.disconnected, steering: served.steering, interventions: served.interventions))
        }
    }

    /// Each `NAME=PATH` of `entries` (the values of `option`) split, or why one is not.
    static func named(_ entries: [String], option: String) throws -> [(name: String, path: String)] {
        var seen: Set<String> = []
        return try entries.map { entry in
            let (name, path) = (String(entry.prefix { $0 != "=" }), String(entry.drop { $0 != "=" }.dropFirst()))
            guard !name.isEmpty, !path.isEmpty, entry.contains("=") else { throw ValidationError("\(option) takes NAME=PATH, got '\(entry)'") }
            guard seen.insert(name).inserted else { throw ValidationError("\(option): the name '\(name)' is given twice") }
            return (name, path)
        }
    }

    /// The named control vectors and SAEs, read and checked against the served models: each must
    /// fit at least one of them.
    static func steeringLibrary(vectors: [(name: String, path: String)], saes: [(name: String, path: String)], models: [ServedModel],
                                everyRequest: RunSteering?) throws -> SteeringLibrary {
        let named = try vectors.map { name, path in
            let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
            let vector = try ControlVector(contentsOf: absolute)
            let misfits = models.compactMap { vector.misfit($0.model) }
            if misfits.count == models.count, let first = misfits.first { throw CommandError("--control-vector-file \(name)=\(path): fits no served model: \(first)") }
            return SteeringLibrary.Named(name: name, path: absolute, value: vector)
        }
        let autoencoders = try saes.map { name, path in
            let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
            let sae = try SparseAutoencoder.load(path: absolute)
            var misfits: [String] = []
            for model in models {
                do { try sae.check(fits: model.model.configuration, file: model.name) } catch { misfits.append("\(error)") }
            }
            if misfits.count == models.count, let first = misfits.first { throw CommandError("--sae \(name)=\(path): fits no served model: \(first)") }
            return SteeringLibrary.Named(name: name, path: absolute, value: sae)
        }
        return SteeringLibrary(vectors: named, saes: autoencoders, everyRequest: everyRequest)
    }

    func validate() throws {
        guard !models.isEmpty else { throw ValidationError("give at least one model") }
        if !lora.files.isEmpty, models.count > 1 {
            throw ValidationError("--lora and --lora-scaled adapt one model, as llama-server's: serve one model with them, got \(models.count)")
        }
        if loraInitWithoutApply, lora.files.isEmpty { throw ValidationError("--lora-init-without-apply needs adapters: --lora or --lora-scaled") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be in 0…65535, got \(port)") }
        guard instances >= 1 else { throw ValidationError("--instances must be at least 1, got \(instances)") }
        guard (1...256).contains(parallel) else { throw ValidationError("--parallel must be in 1…256, got \(parallel)") }
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1, got \(threads)") }
        if let contextLength, contextLength < 1 { throw ValidationError("--ctx must be at least 1, got \(contextLength)") }
        for (name, seconds) in [("--timeout-idle", idleTimeout), ("--max-queue-wait", maximumWait)] where !(seconds > 0 && seconds <= 86_400) {
            throw ValidationError("\(name) must be more than 0 and at most 86400 seconds, got \(seconds)")
        }
        for (name, seconds) in [("--shutdown-grace", shutdownGrace), ("--drain-delay", drainDelay)] where !(0...86_400).contains(seconds) {
            throw ValidationError("\(name) must be in 0…86400 seconds, got \(seconds)")
        }
        guard maximumConnections >= 1 else { throw ValidationError("--max-connections must be at least 1, got \(maximumConnections)") }
        guard maximumQueued >= 0 else { throw ValidationError("--max-queue must be 0 or more, got \(maximumQueued)") }
        for (name, value) in [("--max-embedding-tokens", maximumEmbeddingTokens), ("--grammar-max-nesting", grammarNesting), ("--grammar-max-rules", grammarRules),
                              ("--grammar-max-alternatives", grammarAlternatives), ("--grammar-max-symbols", grammarSymbols)] where value < 1 {
            throw ValidationError("\(name) must be at least 1, got \(value)")
        }
        for origin in corsOrigins where origin != "*" && CrossSitePolicy.origin(of: origin) != origin {
            throw ValidationError("--cors-origin must be * or an origin as browsers send it (scheme://host[:port], no path), got \(origin)")
        }
    }

    func run() async throws {
        let logger = global.bootstrapLogging(label: "lumen.serve")
        let log = await global.openRunLog(logger: logger)
        let key: String? = try apiKeyVariable.map { variable in
            guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else {
                throw ValidationError("--api-key-env \(variable): the variable is not set or empty")
            }
            return value
        }
        if key == nil, !CrossSitePolicy.isLoopback(host) {
            FileHandle.standardError.write(Data("lumen serve: warning: listening on \(host) without --api-key-env: anyone who can reach this address can use the models\n".utf8))
        }
        let paths = try models.map { try ModelLocator.resolve($0) }
        let (instances, parallel, contextLength, threads, pooling) = (self.instances, self.parallel, self.contextLength, self.threads, self.pooling)
        let controlVectors = self.controlVectors
        let templateFile = chatTemplateFile
        let (adapterFiles, withoutApply) = (lora.files, loraInitWithoutApply)
        let cache = self.cache
        let (namedVectors, namedSAEs) = (try Self.named(self.namedVectors, option: "--control-vector-file"), try Self.named(self.namedSAEs, option: "--sae"))
        // Loading the models and reading the vector, SAE, adapter and template files is blocking work: on a thread of its own.
        let (served, steering) = try await DedicatedThread.run(name: "lumen-load") { () throws -> ([ServedModel], SteeringLibrary) in
            let template = try templateFile.map { (path: String) throws(CommandError) in try TextFile.read(path) }
            let served = try paths.map { path in
                let model = try WeightCache.shared.model(at: path)
                let adapters = try ServedAdapters(files: adapterFiles.map { (path: $0.path, scale: withoutApply ? 0 : $0.scale) }, for: model)
                return try ServedModel(name: URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent, model: model,
                                       instances: instances, parallel: parallel, contextLength: contextLength, threads: threads,
                                       cacheType: try cache.resolved(for: model, name: path),
                                       created: Int(Date().timeIntervalSince1970),
                                       pooling: pooling, hooks: try controlVectors.hooks(for: model), template: template, adapters: adapters)
            }
            return (served, try Self.steeringLibrary(vectors: namedVectors, saes: namedSAEs, models: served, everyRequest: controlVectors.logged))
        }
        let names = served.map(\.name)
        guard Set(names).count == names.count else { throw ValidationError("two models have the same name: \(names.joined(separator: ", "))") }
        // A model without a chat template gets its architecture's built-in format: say which.
        for note in served.compactMap(\.chatFormatNote) {
            FileHandle.standardError.write(Data((note + "\n").utf8))
        }
        for model in served {
            FileHandle.standardError.write(Data("lumen serve: \(model.name): \(model.capacityNote)\n".utf8))
            for card in model.adapters.cards {
                FileHandle.standardError.write(Data("lumen serve: \(model.name): LoRA adapter \(card.id): \(card.path), scale \(card.scale)\n".utf8))
            }
        }
        try await OpenAIServer(models: served, apiKey: key, limits: limits, crossSite: CrossSitePolicy(allowedOrigins: corsOrigins), steering: steering,
                               record: log.map { Self.recorder($0) }).run(host: host, port: port, logger: logger) { url in
            FileHandle.standardError.write(Data("lumen serve: \(names.joined(separator: ", ")) at \(url)\n".utf8))
        }
        for model in served {
            FileHandle.standardError.write(Data("lumen serve: \(model.name): \(model.batchNote)\n".utf8))
        }
        await log?.flush()
    }
}

extension Pooling: ExpressibleByArgument {}

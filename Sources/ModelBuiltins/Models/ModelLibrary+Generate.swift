import ChatTemplates
import Evaluation
import Executors
import Foundation
import GGUF
import GenerationTypes
import Grammars
import Inference
import LumenLanguage
import OpenAIAPI
import Widgets

extension ModelLibrary {
    /// The shortest time between two pieces of a generation's streamed text (at most 25 a second).
    static let updateInterval = Duration.milliseconds(40)

    static let generate = Builtin(
        name: "generate",
        signature: "generate(_ model or state, _ prompt: String or [Int], maxTokens: 128, temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1.0, repeatLastN: 64, frequencyPenalty: 0, presencePenalty: 0, logitBias: [Int: Double] = [:], seed: nil, stop: [String] = [], grammar: nil, json: nil, regex: nil, choice: nil, timeout: Double? = nil, steer: ControlVector? = nil, steerScale: 1.0, steerBlocks: nil, features: nil, lora: nil, interventions: [], lookup: nil, draft: nil, draftMax: 16, n: 1, stopButton: false) -> Generation",
        summary: "Generates text after the prompt (text, or token ids read as they are, no BOS added: for models without a text vocabulary), showing it live as tokens arrive. The output can be constrained: grammar: (llama.cpp GBNF), json: (true for any object, or a JSON Schema), regex:, or choice: [Strings]. An interrupt stops within one token and keeps the partial text; after timeout: seconds it stops and returns the text so far, finish reason timeout. steer: adds steerScale times a control vector to the residual stream after each block (of steerBlocks, a range, when given); a served model (connect) steers with its server's vectors by name — steer: \"name\" or [\"name\": scale] — and sets its server's SAE features with features: [\"sae\": [index: value]] and applies its server's LoRA adapters with lora: [id: scale] (llama-server's field; GET /lora-adapters lists the ids), and a loaded model applies LoRA adapter files to this generation alone with lora: [\"style.gguf\": 0.5] (lora: [:] for none); interventions: ablate(…) and patch(…) values change every forward pass. From a State (prefill), it continues after the state's tokens without reading them again. Speculative decoding: lookup: n drafts from the context (the tokens after the latest earlier occurrence of the last n), draft: a smaller model of the same vocabulary drafts; the model verifies up to draftMax drafted tokens in one pass, and the output is the one plain decoding gives. n: samples of the prompt decode together (seeds seed, seed + 1, …; the prompt read once) and come back as a list, shown as a table. stopButton: true shows a Stop button above the text in Jupyter: it ends this generation alone (marked interrupted) and the cell goes on. When the model's chat template marks reasoning (<think>, harmony's analysis channel), a text prompt's output is split: the reasoning streams dimmed and is g.reasoning, g.text the reply."
    ) { arguments, context in
        let state: StateObject? = if case .host(let object as StateObject)? = arguments.peekPositional() { object } else { nil }
        if state != nil { _ = arguments.nextPositional() }
        let model: any GenerativeModel = try state?.model ?? generativeModel(&arguments)
        let promptArgument = try arguments.requirePositional("prompt")
        let promptIDs = try promptTokens(promptArgument, model: model, function: "generate")
        let prompt = try promptIDs.map { "\($0)" } ?? arguments.string(promptArgument, "prompt")
        var options = try generationOptions(&arguments, defaults: context.generationDefaults)
        let timeout = try arguments.labelledNumber("timeout")
        let stopButton = try arguments.labelledBool("stopButton") ?? false
        let remote = model as? RemoteModelObject
        let served = try remote.map { _ throws(LumenError) in try servedSteering(&arguments) } ?? SteeringFields()
        if remote == nil, let (_, location) = arguments.labelled("features") {
            throw LumenError(.value, "features: sets a served model's SAE features by name; on a loaded model use interventions: [setFeature(sae, feature: i, value: v)]",
                             at: location)
        }
        let adapters = try await generationAdapters(&arguments, model: model, state: state)
        let steering = try steering(&arguments)
        let changes = try interventions(&arguments, model: model, at: context.location)
        let (speculation, draftModel) = try speculation(&arguments, model: model)
        options.speculation = speculation
        let samples = try arguments.labelledInteger("n") ?? 1
        try arguments.finish()
        guard (1...256).contains(samples) else { throw LumenError(.value, "n: takes 1 to 256 samples, got \(samples)", at: context.location) }
        if promptIDs != nil {
            let others = [("a state", state != nil), ("n: samples", samples > 1), ("draft:", draftModel != nil)]
            if let (name, _) = others.first(where: \.1) {
                throw LumenError(.value, "a prompt of token ids cannot be combined with \(name) yet; give the prompt as text", at: promptArgument.1)
            }
        }
        if samples > 1 {
            let others = [("a state", state != nil), ("timeout:", timeout != nil), ("stopButton:", stopButton), ("steer:", !steering.hooks.isEmpty || !served.isEmpty),
                          ("lora:", adapters != nil),
                          ("interventions:", !changes.hooks.isEmpty), ("lookup: or draft:", speculation != nil)]
            if let (name, _) = others.first(where: \.1) {
                throw LumenError(.value, "n: samples cannot be combined with \(name); generate them one at a time", at: context.location)
            }
            return try await runSamples(of: prompt, count: samples, model: model, options: options, context: context)
        }
        var record = RunDraft(entry: "generate", model: model)
        record.steering = steering.logged
        record.interventions = changes.logged
        record.adapters = adapters
        // A text prompt's output is split into reasoning and reply as the model's chat format marks them.
        let local = promptIDs == nil ? try? model.loaded(for: "reasoning") : nil
        let reasoning = local?.reasoningSyntax
        if let reasoning, let tokenizer = try? local?.model().tokenizer {
            options.shownTokens.formUnion(reasoning.shownTokenIDs(in: tokenizer.vocabulary))
        }
        // From a state, the model reads the state's text and the prompt; the run log keeps both.
        let generation = try await streamGeneration(prompt: (state?.text ?? "") + prompt, options: options, timeout: timeout,
                                                    stopButton: stopButton, record: record, reasoning: reasoning, context: context) { stop in
            let hooks = steering.hooks + changes.hooks
            if let promptIDs, let local = model as? LoadedModel {
                return (nil, try await local.generate(tokens: promptIDs, options: options, hooks: hooks, adapters: adapters, stop: stop))
            }
            if let state { return (nil, try await state.generate(prompt, options: options, hooks: hooks, draft: draftModel, stop: stop)) }
            if draftModel != nil || adapters != nil, let local = model as? LoadedModel {
                return (nil, try await local.generate(prompt, options: options, hooks: hooks, draft: draftModel, adapters: adapters, stop: stop))
            }
            if let remote, !served.isEmpty { return (nil, try await remote.generate(prompt, options: options, steering: served, hooks: hooks, stop: stop)) }
            return (nil, try await model.generate(prompt, options: options, hooks: hooks, stop: stop))
        }
        try Task.checkCancellation()
        return .host(generation)
    }

    /// A loaded model's adapters for this generation alone (`lora:`, files to scales: read on a
    /// thread of their own, checked against the model), nil when not given. A served model's
    /// `lora:` (ids to scales) is its server's field, read by `servedSteering`; a state continues
    /// under the adapters its cache was computed under.
    static func generationAdapters(_ arguments: inout Arguments, model: any GenerativeModel, state: StateObject?) async throws -> AdapterSet? {
        guard !(model is RemoteModelObject), let (value, location) = arguments.labelled("lora") else { return nil }
        if state != nil {
            throw LumenError(.value, "lora: cannot change the adapters of a state: its cache was computed under its model's; prefill it on m.with(lora: …) instead", at: location)
        }
        let files = try adapterFiles((value, location), function: "generate")
        do {
            let llama = try model.loaded(for: "lora:").model()
            return try await DedicatedThread.run(name: "lumen-lora") { () throws(ModelError) in try AdapterSet(files: files, for: llama) }
        } catch {
            throw LumenError(.model, "\(error)", at: location)
        }
    }

    /// `count` samples of `prompt`, seeds `options`' seed and the next ones: decoded together on
    /// a local model's session (`runAll`), shown as a table, returned as a list.
    static func runSamples(of prompt: String, count: Int, model: any GenerativeModel, options: GenerationOptions,
                           context: Builtin.Context) async throws -> Value {
        let jobs = (0..<count).map { index in
            var sample = options
            sample.sampling.seed = options.sampling.seed &+ UInt64(index)
            return BatchJob(model: model, prompt: prompt, options: sample, label: [String(index + 1), String(sample.sampling.seed)])
        }
        return try await runAll(jobs, labelColumns: ["sample", "seed"], entry: "generate", context: context)
    }

    /// Runs the generation `start` begins (given the signal that stops it; it also returns the
    /// prompt text the model is given when that differs from `prompt`, as a rendered chat),
    /// streaming the text to stdout as it comes (pieces coalesced to at most 25 a second: every
    /// front end shows a stream live, where display updates are lost on some, jupyter console
    /// among them), then the summary line under it. An interrupt stops it within one token and
    /// keeps the partial text (the returned generation says it was interrupted; the caller ends
    /// the cell); after `timeout` seconds it stops the same way and is returned with finish
    /// reason `timeout`. The generation, finished or not, goes to the run log as `record`
    /// describes it. With a `reasoning` syntax, the model's reasoning is told from its reply as
    /// they stream (the reasoning dimmed, an ANSI faint italic every front end's stream shows)
    /// and kept apart in the generation.
    static func streamGeneration(prompt: String, options: GenerationOptions, timeout: Double?, stopButton: Bool = false, record: RunDraft,
                                 reasoning: ReasoningSyntax? = nil, toolCalls: ToolCallStream? = nil, context: Builtin.Context,
                                 start: (StopSignal) async throws -> (renderedPrompt: String?, events: AsyncThrowingStream<TokenEvent, any Error>))
        async throws -> Generation {
        let output = context.output
        // The stream is read by a task of its own, which cancellation of the cell does not reach:
        // an interrupt raises `stop` instead, so the stream still ends with its summary.
        let stop = StopSignal()
        // A Stop button ends this generation alone, as interrupted; the cell goes on.
        let button = stopButton ? try StopButton.show(context: context) { stop.raise() } : nil
        defer { button?.remove(context: context) }
        let (rendered, events) = try await modelWork(at: context.location) { try await start(stop) }
        let consumer = Task { () async throws -> (GenerationCollector, ReasonedReply) in
            var collected = GenerationCollector()
            var split = ReasoningStream(syntax: reasoning, prompt: rendered ?? prompt, endsBefore: toolCalls?.syntax?.starts ?? [])
            var printer = ReasoningPrinter()
            // The text's UTF-8 bytes read so far (the text only grows, a scalar at a time).
            var streamed = 0
            func streamRest() {
                let text = collected.text.utf8
                guard text.count > streamed else { return }
                let (thought, said) = split.append(String(decoding: text.dropFirst(streamed), as: UTF8.self))
                streamed = text.count
                let shown = printer.text(reasoning: thought, reply: said)
                if !shown.isEmpty { output.stream(.stdout, shown) }
            }
            let clock = ContinuousClock()
            var lastUpdate = clock.now
            do {
                for try await event in events {
                    collected.add(event)
                    if case .token = event, clock.now - lastUpdate >= updateInterval {
                        streamRest()
                        lastUpdate = clock.now
                    }
                }
            } catch {
                streamRest()
                throw error
            }
            streamRest()
            let end = printer.finish() + (streamed > 0 && !printer.endsLine ? "\n" : "")
            if !end.isEmpty { output.stream(.stdout, end) }
            return (collected, split.reply)
        }
        let deadline = timeout.map { seconds in
            Task {
                try await Task.sleep(for: .seconds(seconds))
                stop.raise()
            }
        }
        let result: Result<(GenerationCollector, ReasonedReply), any Error> = await withTaskCancellationHandler {
            await consumer.result
        } onCancel: {
            stop.raise()
        }
        deadline?.cancel()
        let interrupted = Task.isCancelled || button?.wasPressed == true
        let deadlinePassed = if case .success? = await deadline?.result { true } else { false }
        let collected: GenerationCollector, reply: ReasonedReply
        do {
            (collected, reply) = try result.get()
        } catch {
            throw LumenError(.model, "\(error)", at: context.location)
        }
        var stats = collected.summary ?? GenerationSummary(promptTokens: 0, generatedTokens: collected.tokens.count, timeToFirstToken: 0,
                                                           promptTokensPerSecond: 0, generationTokensPerSecond: 0, finishReason: .cancelled)
        if deadlinePassed, !interrupted, stats.finishReason == .cancelled { stats.finishReason = .timeout }
        // The reply's tool calls, when it was offered tools, told from its text.
        var calls = toolCalls ?? ToolCallStream(syntax: nil, offered: []) { "" }
        let (content, called) = calls.whole(reply.content)
        let generation = Generation(prompt: rendered ?? prompt, text: content, reasoning: reply.reasoning, toolCalls: called,
                                    tokens: collected.tokens, stats: stats, options: options, interrupted: interrupted)
        output.display(generation.footerBundle, displayID: nil)
        context.shownLive(.host(generation))
        try context.record(generation, entry: record.entry, model: record.model, messages: record.messages, prompt: prompt, rendered: rendered,
                                   steering: record.steering, interventions: record.interventions, adapters: record.adapters)
        return generation
    }


    /// The options `generate` takes besides model and prompt.
    static let generationLabels = ["maxTokens", "temperature", "topK", "topP", "minP", "repeatPenalty", "repeatLastN", "frequencyPenalty",
                                   "presencePenalty", "logitBias", "seed", "stop"]

    /// Sampling and stopping options from a call's labelled arguments, falling back to `defaults`.
    static func generationOptions(_ arguments: inout Arguments, defaults: [String: Value]) throws(LumenError) -> GenerationOptions {
        var options = GenerationOptions()
        for (label, value) in defaults where !arguments.has(label) {
            arguments.add(label, value)
        }
        if let maxTokens = try arguments.labelledInteger("maxTokens") {
            guard maxTokens >= 0 else { throw LumenError(.value, "maxTokens must be 0 or more", at: arguments.callLocation) }
            options.maxTokens = maxTokens
        }
        if let temperature = try arguments.labelledNumber("temperature") { options.sampling.temperature = Float(temperature) }
        if let topK = try arguments.labelledInteger("topK") { options.sampling.topK = topK }
        if let topP = try arguments.labelledNumber("topP") { options.sampling.topP = Float(topP) }
        if let minP = try arguments.labelledNumber("minP") { options.sampling.minP = Float(minP) }
        if let penalty = try arguments.labelledNumber("repeatPenalty") { options.sampling.repeatPenalty = Float(penalty) }
        if let window = try arguments.labelledInteger("repeatLastN") {
            guard window >= -1 else { throw LumenError(.value, "repeatLastN must be 0 or more (or -1: the whole context), got \(window)", at: arguments.callLocation) }
            options.sampling.repeatWindow = window == -1 ? Int.max : window
        }
        if let penalty = try arguments.labelledNumber("frequencyPenalty") { options.sampling.frequencyPenalty = Float(penalty) }
        if let penalty = try arguments.labelledNumber("presencePenalty") { options.sampling.presencePenalty = Float(penalty) }
        if let (biases, location) = arguments.labelled("logitBias") { options.sampling.logitBias = try logitBias(biases, at: location) }
        // A random seed fits in 31 bits, as servers of the OpenAI API take it (llama.cpp reads -1 as "random").
        options.sampling.seed = try arguments.labelledInteger("seed").map { UInt64(bitPattern: Int64($0)) } ?? UInt64.random(in: 0...UInt64(Int32.max))
        if let (stops, location) = arguments.labelled("stop") {
            if case .string(let text) = stops {
                options.stopStrings = [text]
            } else {
                do {
                    options.stopStrings = try Operators.elements(of: stops, at: location).map(\.printed)
                } catch {
                    throw LumenError(.type, "stop: needs a String or an array of Strings, got \(stops.typeName)", at: location)
                }
            }
        }
        options.constraint = try outputConstraint(&arguments)
        return options
    }

    /// `logitBias:`, a Dictionary from token id to the amount added to its logit (`false` bans
    /// the token, as in OpenAI's and llama-server's `logit_bias`). An id the model lacks is
    /// refused when the generation starts (`ModelContainer`).
    static func logitBias(_ value: Value, at location: SourceLocation) throws(LumenError) -> [Int32: Float] {
        guard case .dictionary(let dictionary) = value else {
            throw LumenError(.type, "logitBias: needs a Dictionary from token id to bias, got \(value.typeName)", at: location)
        }
        var biases: [Int32: Float] = [:]
        for (key, bias) in dictionary.pairs {
            guard case .integer(let id) = key, let token = Int32(exactly: id), token >= 0 else {
                throw LumenError(.value, "logitBias: keys must be token ids (0 or more), got \(key.printed)", at: location)
            }
            switch bias {
            case .integer(let amount): biases[token] = Float(amount)
            case .double(let amount) where !amount.isNaN: biases[token] = Float(amount)
            case .bool(false): biases[token] = -.infinity
            default: throw LumenError(.type, "logitBias: token \(id)'s bias must be a number, or false to ban it, got \(bias.printed)", at: location)
            }
        }
        return biases
    }

    /// The options that constrain a generation's output; a call gives at most one.
    static let constraintLabels = ["grammar", "json", "regex", "choice"]

    /// The output constraint a call's `grammar:` (GBNF text), `json:` (true for any object, or a
    /// JSON Schema as a dictionary or JSON text), `regex:` or `choice:` (an array of Strings)
    /// asks for, checked here so a mistake fails the cell at once, with its line and column.
    static func outputConstraint(_ arguments: inout Arguments) throws(LumenError) -> OutputConstraint? {
        var found: [(constraint: OutputConstraint, location: SourceLocation)] = []
        for label in constraintLabels {
            guard let (value, location) = arguments.labelled(label) else { continue }
            let constraint: OutputConstraint
            switch (label, value) {
            case ("grammar", .string(let text)): constraint = .grammar(text)
            case ("regex", .string(let pattern)): constraint = .regex(pattern)
            case ("json", .bool(true)): constraint = .jsonObject
            case ("json", .string(let schema)): constraint = .jsonSchema(schema)
            case ("json", .dictionary):
                guard let schema = value.jsonText else { throw LumenError(.value, "json: the schema has values with no JSON form", at: location) }
                constraint = .jsonSchema(schema)
            case ("choice", _):
                guard let elements = try? Operators.elements(of: value, at: location),
                      case let strings = elements.compactMap({ if case .string(let text) = $0 { text } else { nil } }), strings.count == elements.count else {
                    throw LumenError(.type, "choice: needs an array of Strings, got \(value.typeName)", at: location)
                }
                constraint = .choice(strings)
            case ("json", _): throw LumenError(.type, "json: needs true (any JSON object) or a JSON Schema (a Dictionary or its JSON text), got \(value.typeName)", at: location)
            default: throw LumenError(.type, "\(label): needs a String, got \(value.typeName)", at: location)
            }
            found.append((constraint, location))
        }
        guard found.count <= 1 else {
            throw LumenError(.value, "grammar:, json:, regex: and choice: each constrain the whole output: give one", at: found[1].location)
        }
        guard let (constraint, location) = found.first else { return nil }
        do {
            try Grammar.check(constraint)
        } catch {
            throw LumenError(.value, "\(constraint.optionName): \(error)", at: location)
        }
        return constraint
    }
}

extension ModelLibrary {
    static let defaults = Builtin(
        name: "defaults",
        signature: "defaults(maxTokens:, temperature:, topK:, topP:, minP:, repeatPenalty:, repeatLastN:, frequencyPenalty:, presencePenalty:, logitBias:, seed:, stop:) -> Dictionary",
        summary: "Sets generation options used when a call does not give them; with no arguments, shows them."
    ) { arguments, context in
        var given: [String: Value] = [:]
        for label in generationLabels {
            if let (value, _) = arguments.labelled(label) { given[label] = value }
        }
        try arguments.finish()
        let current = try context.models.generationDefaults.withLock { defaults in
            defaults.merge(given) { $1 }
            return defaults
        }
        var dictionary = LumenDictionary()
        for label in generationLabels {
            if let value = current[label] { dictionary[.string(label)] = value }
        }
        return .dictionary(dictionary)
    }
}

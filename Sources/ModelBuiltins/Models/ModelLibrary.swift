import Display
import Evaluation
import Executors
import Foundation
import GGUF
import Inference
import LumenLanguage
import Synchronization

/// The built-ins that work with models: `load`, `unload`, `reload`, `prewarm`, `quantize`, `generate`,
/// `defaults`, `batch`, `compare`, `bench`, `tokenize`, `tokenId`, `toText`, `nextTokens`, `perplexity`,
/// `compareModels`, the looking-inside ones, and `prefill`/`loadState` (states as values); and what they share in a session: the generation defaults and the run
/// recorder.
final class ModelLibrary: LumenLibrary {
    let builtins: [Builtin] = [load, withAdapters, adapter, unload, reload, prewarm, quantize, generate, defaults, batch, compare, bench, tokenize, tokenId, toText, detokenize, nextTokens,
                               perplexity, compareModels, controlVector, steeringVector, normalize, loadSAE, features, topActivations, saeQuality, setFeature, logitLens, attentionPatterns, trace, ablate, intervene, patch, embed, unembedding, prefill, loadState]
    let magics: [Magic] = [defaultsMagic]
    /// Where the session's generations and measurements are recorded.
    let recorder: CellRecorder
    /// Generation options set by `defaults(…)` or `%defaults`, by label.
    let generationDefaults = Mutex<[String: Value]>([:])

    /// The library of a session recording its runs with `recorder`.
    init(recorder: CellRecorder) {
        self.recorder = recorder
    }

    /// Inside the string argument of `load("`, the model files found.
    func completion(before text: String) -> TextCompletion? {
        guard let open = text.range(of: "load(\"", options: .backwards), !text[open.upperBound...].contains("\"") else { return nil }
        let partial = String(text[open.upperBound...])
        // Each model once: its name without `.gguf` (which load takes), or the whole file name
        // once the partial text goes past that.
        let names = ModelLocator.availableModels().map { file in
            let stem = String(file.dropLast(".gguf".count))
            return partial.count > stem.count ? file : stem
        }
        return TextCompletion(partial: partial, candidates: Array(Set(names.filter { $0.hasPrefix(partial) })).sorted())
    }

    /// ` (did you mean 'x'?)` for a model name that is not found: `x` is the start of a model
    /// file's name (as `load` matches names) closest to it, so `smolm2` finds `smollm2`.
    static func modelNameHint(_ name: String) -> String {
        guard !name.contains("/") else { return "" }
        // Starts of names, lowercased (as load matches them), and as the file writes them.
        let typed = name.lowercased()
        var starts: [String: String] = [:]
        for file in ModelLocator.availableModels() {
            let stem = file.dropLast(".gguf".count)
            for length in max(1, typed.count - 3)...(typed.count + 3) where length <= stem.count {
                starts[String(stem.prefix(length)).lowercased()] = String(stem.prefix(length))
            }
        }
        return Suggestion.closest(to: typed, among: starts.keys).map { " (did you mean '\(starts[$0] ?? $0)'?)" } ?? ""
    }

    /// `%defaults temperature=0.2 maxTokens=64`: `defaults(…)` with the assignments as labels.
    static let defaultsMagic = Magic(name: "%defaults", summary: "show or set generation defaults: %defaults temperature=0.2 maxTokens=64") { words, _ in
        let assignments = words.map { word -> String in
            let parts = word.split(separator: "=", maxSplits: 1)
            return parts.count == 2 ? "\(parts[0]): \(parts[1])" : word
        }
        return "defaults(\(assignments.joined(separator: ", ")))"
    }

    /// Runs `body`, turning a `ModelError` into Lumen's `ModelError` at `location`.
    static func modelCall<Result>(at location: SourceLocation, _ body: () throws(ModelError) -> Result) throws(LumenError) -> Result {
        do {
            return try body()
        } catch {
            throw LumenError(.model, error.description, at: location)
        }
    }

    /// Runs `body`, turning its errors into Lumen's model errors at `location`; a cancelled
    /// cell stays cancelled.
    static func modelWork<Result: Sendable>(at location: SourceLocation, _ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as LumenError {
            throw error
        } catch {
            if Task.isCancelled || error is CancellationError { throw CancellationError() }
            throw LumenError(.model, "\(error)", at: location)
        }
    }

    /// Runs `body` on the least busy session of `model`, turning its errors into Lumen's at
    /// `location`; a cancelled cell stays cancelled.
    static func onSession<Result: Sendable>(of model: LoadedModel, at location: SourceLocation,
                                            _ body: (ModelSession) async throws -> Result) async throws -> Result {
        try await modelWork(at: location) { try await model.withSession(body) }
    }

    /// The positional argument `label`, which must be a host object of type `T` (`what` says
    /// which, in the error).
    static func hostObject<T: HostObject>(_ arguments: inout Arguments, _ label: String, _ what: String) throws(LumenError) -> T {
        let (value, location) = try arguments.requirePositional(label)
        guard case .host(let object) = value, let typed = object as? T else {
            throw LumenError(.type, "expected \(what), got \(value.typeName)", at: location)
        }
        return typed
    }

    /// The positional argument `label` as a model loaded in this process, for a built-in that
    /// needs its weights; a served model refuses, saying why.
    static func loadedModel(_ arguments: inout Arguments, _ label: String = "model") throws(LumenError) -> LoadedModel {
        let (model, location) = try generativeModelAndLocation(&arguments, label)
        do {
            return try model.loaded(for: arguments.function + "()")
        } catch {
            throw LumenError(.type, error.description, at: location)
        }
    }

    /// The positional argument `label`: a loaded or a remote model.
    static func generativeModel(_ arguments: inout Arguments, _ label: String = "model") throws(LumenError) -> any GenerativeModel {
        try generativeModelAndLocation(&arguments, label).model
    }

    private static func generativeModelAndLocation(_ arguments: inout Arguments, _ label: String) throws(LumenError)
        -> (model: any GenerativeModel, location: SourceLocation) {
        let (value, location) = try arguments.requirePositional(label)
        guard case .host(let object) = value, let model = object as? any GenerativeModel else {
            throw LumenError(.type, "expected a model (from load or connect), got \(value.typeName)", at: location)
        }
        return (model, location)
    }

    /// The positional argument `model`: one model, or an array of them (loaded or remote).
    static func generativeModels(_ arguments: inout Arguments) throws(LumenError) -> [any GenerativeModel] {
        let (value, location) = try arguments.requirePositional("model")
        let values: [Value] = if case .array(let elements) = value { elements } else { [value] }
        let models = values.compactMap { value -> (any GenerativeModel)? in
            if case .host(let object) = value { object as? any GenerativeModel } else { nil }
        }
        guard models.count == values.count, !models.isEmpty else {
            throw LumenError(.type, "expected a model (from load or connect) or an array of models, got \(value.typeName)", at: location)
        }
        return models
    }

    static let load = Builtin(
        name: "load",
        signature: "load(_ name: String, contextLength: Int? = nil, threads: Int? = nil, instances: 1, parallel: \(ModelSession.defaultSequences), lora: [String: Double] = [:], cacheType: String = \"f32\") -> Model",
        summary: "Loads a GGUF model by path or by name (searched in LUMEN_MODEL_PATH, ./models and ~/.local/share/lumen/models). Loading a file twice shares its weights. Generations on one of its sessions decode together, up to parallel at a time. lora: LoRA adapter files (llama.cpp's adapter GGUF) with their scales, applied to everything the model runs, without merging. cacheType: the KV cache's type, \"f32\" (exact), \"f16\" or \"q8_0\" (llama.cpp's -ctk/-ctv)."
    ) { arguments, context in
        let (nameArgument, location) = try arguments.requirePositional("name")
        let name = try arguments.string((nameArgument, location), "name")
        let contextLength = try arguments.labelledInteger("contextLength")
        let threads = try arguments.labelledInteger("threads")
            ?? ProcessInfo.processInfo.activeProcessorCount
        let instances = try arguments.labelledInteger("instances") ?? 1
        let parallel = try arguments.labelledInteger("parallel") ?? ModelSession.defaultSequences
        let lora = try arguments.labelled("lora").map { argument throws(LumenError) in try adapterFiles(argument, function: "load") } ?? []
        let cacheType = try arguments.labelled("cacheType").map { argument throws(LumenError) in try kvCacheType(argument) } ?? .f32
        try arguments.finish()
        guard threads >= 1, instances >= 1, parallel >= 1, contextLength.map({ $0 >= 1 }) ?? true else {
            throw LumenError(.value, "threads, instances, parallel and contextLength must be at least 1", at: context.location)
        }
        let path: String
        do {
            path = try ModelLocator.resolve(name)
        } catch {
            throw LumenError(.model, "\(error)\(modelNameHint(name))", at: location)
        }
        let progress = "load-\(UUID().uuidString)"
        ProgressBar(label: "loading \(name)", fraction: 0).show(on: context.output, id: progress)
        // Parsing the file and building the tokenizer is blocking work: it runs on a thread of its own.
        let model: LoadedModel
        do {
            model = try await DedicatedThread.run(name: "lumen-load") { () throws(ModelError) in
                try LoadedModel(path: path, contextLength: contextLength, threads: threads, instances: instances, parallel: parallel, adapters: lora,
                                cacheType: cacheType)
            }
        } catch {
            // The bar does not stay at 0 %: it says what happened; the error follows.
            context.output.progress(.plainText("loading \(name) failed"), id: progress, finished: true)
            throw LumenError(.model, "\(error)", at: location)
        }
        // The model itself is shown where it is the cell's value, as any value is.
        ProgressBar(label: "loading \(name)", fraction: 1).show(on: context.output, id: progress, finished: true)
        return .host(model)
    }

    /// `load`'s `cacheType:` argument: one of the KV cache types by name.
    static func kvCacheType(_ argument: (Value, SourceLocation)) throws(LumenError) -> KVCacheType {
        guard case .string(let name) = argument.0, let type = KVCacheType(rawValue: name) else {
            throw LumenError(.value, "load() expects cacheType: to be one of " + KVCacheType.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                             + ", got \(argument.0.description)", at: argument.1)
        }
        return type
    }

    /// The adapter files and scales of `function`'s `lora:` argument: a dictionary of paths to
    /// finite numbers, in its order.
    static func adapterFiles(_ argument: (Value, SourceLocation), function: String) throws(LumenError) -> [(path: String, scale: Float)] {
        guard case .dictionary(let dictionary) = argument.0 else {
            throw LumenError(.type, "\(function)() expects lora: to be a dictionary of adapter files to scales ([\"style.gguf\": 1.0]), got \(argument.0.typeName)", at: argument.1)
        }
        var files: [(path: String, scale: Float)] = []
        for (key, value) in dictionary.pairs {
            guard case .string(let path) = key, let scale = Operators.number(value), scale.isFinite, Float(scale).isFinite else {
                throw LumenError(.type, "\(function)() expects lora: to map adapter files to finite scales, got \(key.description): \(value.description)", at: argument.1)
            }
            files.append((path, Float(scale)))
        }
        return files
    }

    /// `with(m, lora:)`, `m.with(lora:)`: the model's weights (shared, not read again) with other adapters.
    static let withAdapters = Builtin(
        name: "with",
        signature: "with(_ model, lora: [String: Double]) -> Model",
        summary: "The same weights (shared, not read again) with other LoRA adapters, in sessions of their own: m.with(lora: [\"style.gguf\": 0.5]); compareModels(m, m.with(lora: a)) measures what an adapter changes; lora: [:] is the base model."
    ) { arguments, context in
        let model = try loadedModel(&arguments)
        let (value, location) = try arguments.requireLabelled("lora")
        let lora = try adapterFiles((value, location), function: "with")
        try arguments.finish()
        do {
            return .host(try await DedicatedThread.run(name: "lumen-load") { () throws(ModelError) in
                try LoadedModel(path: model.path, contextLength: model.contextLength, threads: model.threads, instances: model.instances,
                                parallel: model.parallel, adapters: lora, cacheType: model.cacheType)
            })
        } catch {
            throw LumenError(.model, "\(error)", at: location)
        }
    }

    static let unload = Builtin(name: "unload", signature: "unload(_ model)", summary: "Releases the model's weights and caches; using it afterwards is an error.") { arguments, _ in
        let model = try loadedModel(&arguments)
        try arguments.finish()
        model.unload()
        return .null
    }

    static let reload = Builtin(name: "reload", signature: "reload(_ model)", summary: "Reads the model's file again (after it changed on disk), keeping the variable.") { arguments, context in
        let model = try loadedModel(&arguments)
        try arguments.finish()
        do {
            try await DedicatedThread.run(name: "lumen-load") { () throws(ModelError) in try model.reload() }
        } catch {
            throw LumenError(.model, "\(error)", at: context.location)
        }
        return .host(model)
    }

    static let prewarm = Builtin(name: "prewarm", signature: "prewarm(_ model)", summary: "Reads every weight once in the background (utility priority), so the first generation does not wait for the disk.") { arguments, context in
        let model = try loadedModel(&arguments)
        try arguments.finish()
        let weights = try modelCall(at: context.location) { () throws(ModelError) in try model.model() }
        // Page faults block: a utility-priority thread of its own reads the weights.
        DedicatedThread.start(name: "lumen-prewarm", quality: .utility) { weights.touchWeights() }
        return .null
    }

    static let tokenize = Builtin(name: "tokenize", signature: "tokenize(_ model, _ text: String) -> Tokens", summary: "The tokens of the text (BOS first, as generate reads it) as data: t[i] is an id (negative from the end), t[a..<b] Tokens, len(t) their count, for id in t the ids; t.ids, t.pieces (byte fragments as <0x..>), t.text. Shown as a table of index, id and piece.") { arguments, _ in
        let model = try loadedModel(&arguments)
        let text = try arguments.string(try arguments.requirePositional("text"), "text")
        try arguments.finish()
        let llama = try modelCall(at: arguments.callLocation) { () throws(ModelError) in try model.model() }
        return .host(TokensObject(ids: llama.tokenizer.encode(text), tokenizer: llama.tokenizer))
    }

    static let tokenId = Builtin(name: "tokenId", signature: "tokenId(_ model, _ text: String) -> Int", summary: "The id of the one token the text is (no BOS): tokenId(m, \" Mary\"); an error naming the pieces when the text is several tokens.") { arguments, context in
        let model = try loadedModel(&arguments)
        let (value, location) = try arguments.requirePositional("text")
        let text = try arguments.string((value, location), "text")
        try arguments.finish()
        let llama = try modelCall(at: location) { () throws(ModelError) in try model.model() }
        let ids = llama.tokenizer.encode(text, addSpecial: false)
        guard ids.count == 1 else {
            let pieces = ids.map { llama.tokenizer.visiblePiece($0).debugDescription }.joined(separator: " ")
            throw LumenError(.value, "\(text.debugDescription) is \(ids.count) tokens\(ids.isEmpty ? "" : " (\(pieces))"), not one: tokenize(m, text).ids gives them all", at: location)
        }
        return .integer(Int(ids[0]))
    }

    static let toText = detokenizing(named: "toText")
    /// `toText` by the name earlier versions gave it.
    static let detokenize = detokenizing(named: "detokenize")

    /// The built-in that gives the text of token ids, called `name`.
    private static func detokenizing(named name: String) -> Builtin {
        Builtin(name: name, signature: "\(name)(_ model, _ ids: [Int] or Tokens) -> String", summary: "The text of token ids (or of Tokens).") { arguments, _ in
            let model = try loadedModel(&arguments)
            let (idsValue, location) = try arguments.requirePositional("ids")
            try arguments.finish()
            let ids = try tokenIDs(idsValue, at: location, function: name)
            let llama = try modelCall(at: location) { () throws(ModelError) in try model.model() }
            return .string(llama.tokenizer.decode(ids))
        }
    }

    /// The elements of `value`, a list of Ints, as token ids (not yet checked against a vocabulary).
    static func tokenIDs(_ value: Value, at location: SourceLocation, function: String) throws -> [Int32] {
        var ids: [Int32] = []
        for element in try Operators.elements(of: value, at: location) {
            guard case .integer(let id) = element, let narrow = Int32(exactly: id) else {
                throw LumenError(.type, "\(function)() needs Int token ids, got \(element.description)", at: location)
            }
            ids.append(narrow)
        }
        return ids
    }

    /// A prompt given as token ids (a list of Ints, read as they are: no BOS added) for `model`,
    /// or nil when `argument` is not a list: for models without a text vocabulary (llama.cpp's
    /// random-weight test models) and exact experiments, as `lumen generate --prompt-ids`. Each id
    /// must be in the vocabulary; a served model refuses them.
    static func promptTokens(_ argument: (Value, SourceLocation), model: any GenerativeModel, function: String) throws -> [Int32]? {
        guard case .array = argument.0 else { return nil }
        let local = try modelCall(at: argument.1) { () throws(ModelError) in try model.loaded(for: "a prompt of token ids") }
        let ids = try tokenIDs(argument.0, at: argument.1, function: function)
        let vocabularySize = try modelCall(at: argument.1) { () throws(ModelError) in try local.model() }.configuration.vocabularySize
        guard !ids.isEmpty else { throw LumenError(.value, "\(function)() needs at least one token id in the prompt", at: argument.1) }
        if let outside = ids.first(where: { $0 < 0 || Int($0) >= vocabularySize }) {
            throw LumenError(.value, "\(function)(): \(outside) is not a token id (the vocabulary has \(vocabularySize))", at: argument.1)
        }
        return ids
    }

    static let nextTokens = Builtin(name: "nextTokens", signature: "nextTokens(_ model, _ prompt: String or [Int], k: Int = 10) -> Table", summary: "The k most likely next tokens after the prompt (text, or token ids read as they are), as a table and a bar chart of probabilities (a remote model's from the server's top_logprobs).") { arguments, context in
        let model = try generativeModel(&arguments)
        let promptArgument = try arguments.requirePositional("prompt")
        let promptIDs = try promptTokens(promptArgument, model: model, function: "nextTokens")
        let prompt = try promptIDs.map { "\($0)" } ?? arguments.string(promptArgument, "prompt")
        let k = try arguments.labelledInteger("k") ?? 10
        try arguments.finish()
        guard k >= 1 else { throw LumenError(.value, "k must be at least 1", at: context.location) }
        let top: [(id: Int32?, piece: String, logProbability: Double)]
        do {
            if let promptIDs, let local = model as? LoadedModel {
                top = try await local.nextTokens(tokens: promptIDs, k: k)
            } else {
                top = try await model.nextTokens(prompt, k: k)
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw LumenError(.model, "\(error)", at: context.location)
        }
        let rows = top.map { [$0.id.map(String.init) ?? "", $0.piece.debugDescription, String(format: "%.4f", exp($0.logProbability))] }
        let chart = Chart(kind: .bar, labels: top.map { $0.piece.debugDescription }, series: [.init(name: "", values: top.map { exp($0.logProbability) })],
                          title: "next token after \(prompt.debugDescription)", yLabel: "probability")
        let table = Table(columns: ["id", "piece", "probability"], rows: rows)
        // In text (a terminal, a log) the chart is a column of bars, 40 characters for certainty.
        let bars = top.map { [String(repeating: "█", count: Int((exp($0.logProbability) * 40).rounded()))] }
        let textTable = Table(columns: table.columns + [""], rows: zip(rows, bars).map { $0 + $1 })
        let bundle = MIMEBundle(["text/html": table.html + chart.svg, "text/plain": textTable.plainText])
        return .rendered(Rendered(kind: "NextTokens", bundle: bundle))
    }
}

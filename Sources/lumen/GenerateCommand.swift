import ArgumentParser
import Executors
import Foundation
import GGUF
import GenerationTypes
import Inference
import LumenKit
import ModelBuiltins
import RunLog

/// `lumen generate MODEL PROMPT`: prints tokens as they arrive, then a summary on stderr.
struct GenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate text from a prompt, streaming tokens; Ctrl-C stops cleanly."
    )

    @ArgumentParser.Argument(help: "A GGUF model: a path, or a name found as load() finds it (LUMEN_MODEL_PATH, the model cache).")
    var model: String

    @ArgumentParser.Argument(help: "The prompt (or give its token ids with --prompt-ids).")
    var prompt: String?

    @Option(name: .customLong("prompt-ids"), help: "The prompt as comma-separated token ids, read as they are (no BOS added): for models without a text vocabulary, such as llama.cpp's random-weight test models, and for exact experiments.")
    var promptIDs: String?

    @OptionGroup var sampling: SamplingArguments

    @OptionGroup(title: "Constrained output") var constraints: ConstraintArguments

    @OptionGroup(title: "Control vectors") var controlVectors: ControlVectorArguments

    @OptionGroup(title: "LoRA adapters") var lora: LoRAArguments

    @OptionGroup(title: "KV cache") var cache: CacheTypeArguments

    @OptionGroup(title: "Speculative decoding") var speculation: SpeculationArguments

    @Flag(help: "Print one JSON object at the end (prompt_ids, ids, text, finish_reason) instead of streaming text.")
    var json = false

    @Flag(name: .customLong("ignore-eos"), help: "Go on past end-of-generation tokens, up to -n (llama.cpp's --ignore-eos).")
    var ignoreEndOfSequence = false

    @Option(name: .customLong("force-ids"), help: "Teacher forcing: comma-separated ids fed after each step instead of the picked ones (ids still reports the picks).")
    var forceIDs: String?

    @Option(name: .customLong("dump-logits"), help: "Write the logits of every step to FILE: the row after the prompt, then one after each fed token (rows of little-endian float32, one per generated token).")
    var dumpLogits: String?

    @Option(name: .customLong("prompt-cache"), help: "A file for the prompt's state (llama.cpp's --prompt-cache): read when it exists, so a prompt that starts with its tokens is not read again, and written after the prompt. Greedy output is the same with and without it.")
    var promptCache: String?

    @Flag(name: .customLong("prompt-cache-ro"), help: "Read the --prompt-cache file but never write it.")
    var promptCacheReadOnly = false

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if let forceIDs, Self.ids(forceIDs) == nil { throw ValidationError("--force-ids must be comma-separated token ids, got \(forceIDs)") }
        switch (prompt, promptIDs) {
        case (nil, nil): throw ValidationError("give a prompt, or its token ids with --prompt-ids")
        case (.some, .some): throw ValidationError("give a prompt or --prompt-ids, not both")
        case (nil, let ids?) where Self.ids(ids)?.isEmpty != false: throw ValidationError("--prompt-ids must be comma-separated token ids, got \(ids)")
        default: break
        }
        if promptCacheReadOnly, promptCache == nil { throw ValidationError("--prompt-cache-ro needs --prompt-cache FILE") }
        if promptCache != nil, controlVectors.logged != nil || !lora.files.isEmpty {
            throw ValidationError("--prompt-cache cannot be combined with control vectors or LoRA adapters, which change the keys and values it would keep")
        }
    }

    /// Restores the state saved at `path` (refusing one of another model or a corrupt one) and,
    /// unless read-only, reads the prompt into the cache and saves it there when that added to it.
    /// Hashing the model and reading and writing the state block, so they run on threads of
    /// their own.
    private func usePromptCache(_ path: String, prompt: [Int32], session: ModelSession, model: LanguageModel, log: RunLog?) async throws {
        let modelPath = model.gguf.path
        guard let digest = await RunLog.digest(of: modelPath, rememberedBy: log) else {
            throw CommandError("\(modelPath): cannot be read to take its SHA-256, which binds the prompt cache to it")
        }
        var restored: [Int32] = []
        if FileManager.default.fileExists(atPath: path) {
            let adapters = await session.adapters
            let saved = try await DedicatedThread.run(name: "lumen-state-read") { () throws(ModelError) in
                try SavedState.read(from: path, for: session, modelSHA256: digest, adapters: adapters)
            }
            await session.restore(saved)
            restored = saved.tokens
        }
        guard !promptCacheReadOnly, !prompt.isEmpty, restored != prompt else { return }
        _ = try await session.prefill(prompt)
        let prefix = await session.cachedPrefix()
        try await DedicatedThread.run(name: "lumen-state-write") { () throws(ModelError) in
            try SavedState.write(prefix, to: path, modelSHA256: digest)
        }
    }

    private static func ids(_ text: String) -> [Int32]? {
        let parts = text.split(separator: ",").map { Int32($0.trimmingCharacters(in: .whitespaces)) }
        return parts.contains(nil) ? nil : parts.compactMap { $0 }
    }

    /// What `--json` prints.
    private struct Report: Encodable {
        let promptIDs: [Int32]
        let ids: [Int32]
        let text: String
        let finishReason: String

        /// The keys of the reference files.
        enum CodingKeys: String, CodingKey {
            case promptIDs = "prompt_ids", ids, text, finishReason = "finish_reason"
        }
    }

    func run() async throws {
        let logger = global.bootstrapLogging(label: "lumen.generate")
        let log = await global.openRunLog(logger: logger)
        // Ctrl-C stops the generation (which still ends with its summary) rather than the
        // process, from before the model loads.
        let stop = StopSignal()
        let interrupts = SignalListener { _ in stop.raise() }
        defer { interrupts.cancel() }
        let constraint = try await constraints.readConstraint()
        let llama = try await WeightCache.shared.load(ModelLocator.resolve(model))
        let container = ModelContainer(model: llama, settings: ModelContainer.Settings(contextLength: sampling.contextLength, threads: sampling.threads,
                                                                                       sequencesPerSession: 1, hooks: try await controlVectors.readHooks(for: llama),
                                                                                       adapters: try await lora.adapters(for: llama),
                                                                                       cacheType: try cache.resolved(for: llama, name: model)),
                                       recorder: log.map { RunRecorder(log: $0, origin: RunOrigin(frontEnd: "cli")) })
        var options = try sampling.options(vocabularySize: llama.tokenizer.vocabularySize)
        options.constraint = constraint
        let forced = forceIDs.flatMap(Self.ids) ?? []
        let givenPrompt = promptIDs.flatMap(Self.ids)
        for (option, ids) in [("--force-ids", forced), ("--prompt-ids", givenPrompt ?? [])] {
            if let invalid = ids.first(where: { $0 < 0 || Int($0) >= llama.tokenizer.vocabularySize }) {
                throw ValidationError("\(option): \(invalid) is not a token id (the vocabulary has \(llama.tokenizer.vocabularySize))")
            }
        }
        options.forcedTokens = forced
        options.stopAtEndOfSequence = forced.isEmpty && !ignoreEndOfSequence
        options.recordedLogits = dumpLogits == nil ? 0 : Int.max
        options.speculation = speculation.speculation
        let draft = try await speculation.draftModel(for: llama)
        let promptTokens = givenPrompt ?? container.tokenize(prompt ?? "")
        let promptText = prompt ?? container.detokenize(promptTokens, showSpecial: true)
        if let promptCache {
            try await container.withSession { session in
                try await usePromptCache(promptCache, prompt: promptTokens, session: session, model: llama, log: log)
            }
        }
        let streaming = !json
        let run = RunDescription(entry: "lumen generate", prompt: promptText, steering: controlVectors.logged)
        let collected = try await GenerationCollector.collect(container.generate(tokens: promptTokens, options: options, draft: draft, stop: stop, run: run)) { token in
            if streaming { FileHandle.standardOutput.write(Data(token.text.utf8)) }
        }
        let (summary, tokens) = (collected.summary, collected.tokens)
        if let dumpLogits {
            var bytes = Data()
            for row in tokens.compactMap(\.logits) {
                row.withUnsafeBytes { bytes.append(contentsOf: $0) }
            }
            do { try bytes.write(to: URL(fileURLWithPath: dumpLogits)) } catch {
                throw CommandError("cannot write \(dumpLogits): \(error.localizedDescription)")
            }
        }
        if json {
            let report = Report(promptIDs: promptTokens, ids: tokens.map(\.id), text: tokens.map(\.text).joined(),
                                finishReason: stop.isRaised ? "interrupted" : summary?.finishReason.rawValue ?? "cancelled")
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            FileHandle.standardOutput.write(try encoder.encode(report) + Data("\n".utf8))
        } else {
            print("")
        }
        if let summary {
            FileHandle.standardError.write(Data((Self.describe(summary) + "\n").utf8))
        }
        await log?.flush()
    }

    /// The one-line summary printed after generation.
    static func describe(_ summary: GenerationSummary) -> String {
        String(format: "[%d prompt tokens%@ at %.1f tok/s, %d generated at %.1f tok/s%@, first token after %.0f ms, finished: %@]",
               summary.promptTokens, summary.reusedPromptTokens > 0 ? " (\(summary.reusedPromptTokens) reused)" : "", summary.promptTokensPerSecond,
               summary.generatedTokens, summary.generationTokensPerSecond, summary.draftSummary.map { ", \($0)" } ?? "",
               summary.timeToFirstToken * 1000, summary.finishReason.rawValue)
    }
}

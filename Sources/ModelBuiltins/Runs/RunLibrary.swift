import ChatTemplates
import Display
import Evaluation
import Executors
import Foundation
import GGUF
import Inference
import LumenKit
import LumenLanguage
import RunLog

/// The run log in a session: `runs` and `replay` read it, `%runs` lists it, `%log` turns
/// recording on or off, and flushing the session's records writes it.
public final class RunLibrary: LumenLibrary {
    public let builtins: [Builtin] = [runs, replay]
    public let magics: [Magic]
    /// The session's recorder, shared with the model library.
    let recorder: CellRecorder

    /// The library of a session recording with `recorder`.
    init(recorder: CellRecorder) {
        self.recorder = recorder
        magics = [Self.runsMagic, Self.logMagic(recorder)]
    }

    /// Writes the runs recorded so far; returns when they are on disk.
    public func flush() async {
        await recorder.runLog?.flush()
    }

    /// The error for using the run log when it is off.
    private static func logIsOff(at location: SourceLocation?) -> LumenError {
        LumenError(.value, "the run log is off (LUMEN_LOG=0 or --no-log)", at: location)
    }

    /// The session's run log, or an error saying it is off.
    static func log(_ context: Builtin.Context) throws(LumenError) -> RunLog {
        guard let log = try context.library(RunLibrary.self).recorder.runLog else { throw logIsOff(at: context.location) }
        return log
    }

    /// `%runs [N]`: the last N runs (20 by default), as `runs(limit: N)`.
    private static let runsMagic = Magic(name: "%runs", summary: "list the last runs in the run log: %runs [N] (default 20)") { words, _ in
        "runs(limit: \(words.first.flatMap { Int($0) } ?? 20))"
    }

    /// `%log on`, `%log off`, and `%log` alone: turns recording on or off, and says where the log is.
    private static func logMagic(_ recorder: CellRecorder) -> Magic {
        Magic(name: "%log", summary: "turn the run log on or off for this session: %log on, %log off; %log alone says where it is") { words, output in
            guard let log = recorder.runLog else { throw Self.logIsOff(at: nil) }
            switch words.first {
            case "on": recorder.logging.withLock { $0 = true }
            case "off": recorder.logging.withLock { $0 = false }
            case nil: break
            case let other?: throw LumenError(.value, "%log takes on or off, not \(other)")
            }
            output.stream(.stdout, "run log \(recorder.logging.withLock { $0 } ? "on" : "off"): \(log.path)\n")
            return nil
        }
    }

    static let runs = Builtin(
        name: "runs",
        signature: "runs(model: String? = nil, since: String? = nil, contains: String? = nil, kind: String? = nil, limit: Int = 20) -> Runs",
        summary: "Logged runs, newest first: by model (name or path containing the text), since a date (\"2026-11-23\" or \"2026-11-23 14:00\"), with the text in the prompt or output, of a kind (generation, perplexity, comparison). A table; runs()[0] is one run with everything the log keeps."
    ) { arguments, context in
        let model = try arguments.labelledString("model")
        let since = try arguments.labelledString("since")
        let contains = try arguments.labelledString("contains")
        let kindName = try arguments.labelledString("kind")
        let limit = try arguments.labelledInteger("limit") ?? 20
        try arguments.finish()
        let date = try since.map { (text) throws(LumenError) in
            guard let date = parseDate(text) else {
                throw LumenError(.value, "since: needs a date like 2026-11-23 or 2026-11-23 14:00, got \(text.debugDescription)", at: context.location)
            }
            return date
        }
        let kind = try kindName.map { (name) throws(LumenError) in
            do { return try RunKind(named: name) } catch { throw LumenError(.value, "kind: \(error)", at: context.location) }
        }
        let log = try log(context)
        do {
            return .host(RunList(try await log.runs(RunQuery(model: model, since: date, contains: contains, kind: kind, limit: max(0, limit)))))
        } catch {
            throw LumenError(.value, "cannot read the run log at \(log.path): \(error)", at: context.location)
        }
    }

    static let replay = Builtin(
        name: "replay",
        signature: "replay(_ run) -> Replay",
        summary: "Runs a logged generation again with the same model file, prompt and options (seed and control vectors included) and tells whether the output is identical: a reproducibility check (.identical, .text, .original, .firstDifference)."
    ) { arguments, context in
        let run: LoggedRun = try ModelLibrary.hostObject(&arguments, "run", "a run (from runs())")
        try arguments.finish()
        let record = run.record
        guard record.kind == .generation, let options = record.options else {
            throw LumenError(.value, "only generations can be replayed; run \(record.id ?? 0) is a \(record.kind.rawValue)", at: context.location)
        }
        let log = try log(context)
        // The model and the adapters it ran under, each file checked against its logged digest.
        let adapters = (record.model.adapters ?? []).map { (path: $0.path, scale: Float($0.scale)) }
        for (file, logged) in [(record.model.path, record.model.sha256)] + (record.model.adapters ?? []).map({ ($0.path, $0.sha256) }) {
            if let logged, let now = await log.digest(of: file), logged != now {
                context.output.stream(.stderr, "note: \(file) has changed since run \(record.id ?? 0) (SHA-256 differs)\n")
            }
        }
        let path = record.model.path
        guard !path.contains("://") else {
            throw LumenError(.value, "run \(record.id ?? 0) ran on a served model (\(path)); replay repeats runs of local model files", at: context.location)
        }
        let model: LoadedModel
        do {
            model = try await DedicatedThread.run(name: "lumen-load") { () throws(ModelError) in
                try LoadedModel(path: path, contextLength: nil, threads: ProcessInfo.processInfo.activeProcessorCount, instances: 1,
                                parallel: ModelSession.defaultSequences, adapters: adapters)
            }
        } catch {
            throw LumenError(.model, "\(error)", at: context.location)
        }
        let container = try model.container()
        let text = record.renderedPrompt ?? record.prompt
        let tokens = record.renderedPrompt == nil ? container.tokenize(text) : Conversation.promptTokens(container.model.tokenizer, text: text)
        // A steered run is steered again by the same vector files; its ablations and patches are
        // made again (a patch's source run again, on a session held only for that).
        let hooks: [any ForwardHook]
        do {
            hooks = try await container.withSession { session in
                var hooks = try await options.steering?.hooks(on: session) ?? []
                for intervention in options.interventions ?? [] { hooks.append(try await intervention.hook(on: session)) }
                return hooks
            }
        } catch {
            throw LumenError(.model, "\(error)", at: context.location)
        }
        var draft = RunDraft(entry: "replay", model: model)
        draft.steering = options.steering
        draft.interventions = options.interventions ?? []
        let generation = try await ModelLibrary.streamGeneration(prompt: text, options: options.generationOptions, timeout: nil,
                                                                 record: draft, context: context) { stop in
            (nil, container.generate(tokens: tokens, options: options.generationOptions, hooks: hooks, stop: stop))
        }
        if generation.interrupted { throw CancellationError() }
        let replayed = generation.tokens.map(\.id)
        let identical = replayed == record.tokenIDs
        let difference = zip(replayed, record.tokenIDs).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? (identical ? nil : min(replayed.count, record.tokenIDs.count))
        let verdict = identical ? "identical to run \(record.id ?? 0) (\(replayed.count) tokens)"
            : "differs from run \(record.id ?? 0) at token \(difference ?? 0)"
        return .host(Measurement(typeName: "Replay", number: nil, properties: [
            "identical": .bool(identical), "text": .string(generation.text), "original": .string(record.output),
            "firstDifference": difference.map(Value.integer) ?? .null, "run": .integer(Int(record.id ?? 0)),
        ], bundle: .plainText("replay: " + verdict)))
    }

    /// A date from `2026-11-23`, `2026-11-23 14:00` or `2026-11-23T14:00:00`, in local time.
    public static func parseDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        for format in ["yyyy-MM-dd", "yyyy-MM-dd HH:mm", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm:ss"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}

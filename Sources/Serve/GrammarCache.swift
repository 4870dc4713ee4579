import Crypto
import Executors
import Foundation
import GenerationTypes
import Grammars
import Synchronization

/// The grammars requests ask for, compiled for the server: off the cooperative pool, within the
/// server's `GrammarLimits`, abandoned when the request is cancelled, checked to allow a first
/// token of the model's vocabulary, and kept by the SHA-256 of what was asked (and the model), so
/// a schema sent again costs nothing. Holds the most recent `capacity` grammars.
final class GrammarCache: Sendable {
    /// A grammar compiled, with what compiling it took.
    struct Compiled: Sendable {
        let grammar: Grammar
        /// Zero when it came from the cache.
        let duration: Duration
    }

    private struct Entries {
        var grammars: [String: Grammar] = [:]
        /// Keys, oldest first.
        var order: [String] = []
    }

    private let entries = Mutex(Entries())
    private let limits: GrammarLimits
    private let capacity: Int

    /// A cache of at most `capacity` grammars compiled within `limits`.
    init(limits: GrammarLimits, capacity: Int = 64) {
        self.limits = limits
        self.capacity = capacity
    }

    /// The grammar `constraint` stands for over `model`'s vocabulary.
    ///
    /// - Throws: `GrammarError` naming what is wrong or which limit was crossed, and where; one
    ///   for a grammar no token of the vocabulary can start; `CancellationError` when the task
    ///   was cancelled while it compiled.
    func grammar(for constraint: OutputConstraint, model: ServedModel) async throws -> Compiled {
        let key = Self.key(constraint, model: model.name)
        if let known = cached(key) { return Compiled(grammar: known, duration: .zero) }
        let cancelled = Atomic<Bool>(false)
        let limits = self.limits
        let started = ContinuousClock.now
        let grammar: Grammar
        do {
            grammar = try await withTaskCancellationHandler {
                // The work ends by itself within the limits; a cancellation only ends it sooner.
                try await DedicatedThread.run(name: "lumen-grammar") { () throws(GrammarError) -> Grammar in
                    try Self.compile(constraint, for: model, limits: limits) { cancelled.load(ordering: .relaxed) }
                }
            } onCancel: {
                cancelled.store(true, ordering: .relaxed)
            }
        } catch let error as GrammarError where error.isCancellation {
            throw CancellationError()
        }
        try Task.checkCancellation()
        store(grammar, as: key)
        return Compiled(grammar: grammar, duration: ContinuousClock.now - started)
    }

    private func cached(_ key: String) -> Grammar? {
        entries.withLock { $0.grammars[key] }
    }

    /// Keeps `grammar`, forgetting the oldest past the capacity.
    private func store(_ grammar: Grammar, as key: String) {
        entries.withLock { entries in
            if entries.grammars.updateValue(grammar, forKey: key) == nil { entries.order.append(key) }
            if entries.order.count > capacity { entries.grammars[entries.order.removeFirst()] = nil }
        }
    }

    /// Compiles `constraint` for `model` and checks that some token can start its output.
    private static func compile(_ constraint: OutputConstraint, for model: ServedModel, limits: GrammarLimits,
                                isCancelled: @escaping () -> Bool) throws(GrammarError) -> Grammar {
        let vocabulary = model.model.tokenizer.vocabulary
        let grammar = try Grammar(constraint, tokenNamed: { vocabulary.id(of: Array($0.utf8)) }, limits: limits, isCancelled: isCancelled)
        var matcher = GrammarMatcher(grammar, trie: model.model.tokenTrie)
        let allowed = matcher.allowedTokens()
        let source = Grammar.source(of: constraint)
        if let overrun = matcher.overrun { throw GrammarError(source, at: .whole, overrun) }
        guard allowed.contains(where: { $0 != 0 }) else {
            throw GrammarError(source, at: .whole, "no token of the model's vocabulary can start an output it allows")
        }
        return grammar
    }

    /// What identifies a compiled grammar: the model (its vocabulary names tokens) and the constraint.
    private static func key(_ constraint: OutputConstraint, model: String) -> String {
        let described: String = switch constraint {
        case .grammar(let text): "grammar\u{0}" + text
        case .jsonObject: "json\u{0}"
        case .jsonSchema(let schema): "schema\u{0}" + schema
        case .regex(let pattern): "regex\u{0}" + pattern
        case .choice(let options): "choice\u{0}" + options.map { "\($0.utf8.count):" + $0 }.joined()
        }
        return SHA256.hash(data: Data((model + "\u{0}" + described).utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

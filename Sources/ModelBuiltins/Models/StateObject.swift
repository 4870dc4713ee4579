import Display
import Evaluation
import GGUF
import GenerationTypes
import Inference
import LumenKit
import LumenLanguage
import Tokenizers

/// A model's state after a prompt, as a value (`prefill(m, prompt)`, `loadState(m, path)`): the
/// tokens read with their keys and values. Generating from it (`s.generate(text)`) continues
/// the prompt without reading it again, as often as wanted — each continuation starts from the
/// same state, so two are a fork; `s.prefill(text)` extends it into a new state; `save(s, path)`
/// writes it to a file bound to the model file's SHA-256. Copies of a state share its keys and
/// values.
final class StateObject: MemberTableHostObject, SavableHostObject {
    /// The model whose sessions continue from it.
    let model: LoadedModel
    /// The weights that computed it: after `reload()` the model's are others, and the state is
    /// refused.
    let weights: LanguageModel
    /// The tokens with their keys and values.
    let prefix: ModelSession.CachedPrefix

    init(model: LoadedModel, weights: LanguageModel, prefix: ModelSession.CachedPrefix) {
        self.model = model
        self.weights = weights
        self.prefix = prefix
    }

    var typeName: String { "State" }
    static let memberTable = MemberTable<StateObject>(properties: [
        ("ids", { .array($0.prefix.tokens.map { .integer(Int($0)) }) }),
        ("tokens", { object in .array(object.prefix.tokens.map { .string(object.weights.tokenizer.textPiece($0)) }) }),
        ("text", { .string($0.text) }),
        ("bytes", { .integer($0.prefix.byteCount) }),
        ("cacheType", { .string($0.prefix.cacheType.rawValue) }),
        ("model", { .host($0.model) }),
    ], methods: [ModelLibrary.generate, ModelLibrary.prefill, TensorLibrary.save])

    /// Writes the state to a file of its own, bound to its model file's SHA-256 (`loadState` reads it).
    func save(to path: String, context: Builtin.Context) async throws {
        try await ModelLibrary.save(self, to: path, context: context)
    }

    /// The tokens as text.
    var text: String { weights.tokenizer.decode(prefix.tokens) }

    /// The model's weights, checked to be the ones that computed the state.
    func checkedWeights() throws(ModelError) -> LanguageModel {
        guard try model.model() === weights else {
            throw ModelError(file: model.path, field: "state", reason: "was computed by the model before it was reloaded: make it again")
        }
        return weights
    }

    /// The state's tokens followed by `text`'s (no BOS: it continues).
    func tokens(continuedBy text: String) throws(ModelError) -> [Int32] {
        prefix.tokens + (try checkedWeights()).tokenizer.encode(text, addSpecial: false)
    }

    /// Generates after the state's tokens and `text`, on the least busy session, copying the
    /// state into its cache unless that already holds more of the prompt; `draft` drafts for
    /// speculative decoding.
    func generate(_ text: String, options: GenerationOptions, hooks: [any ForwardHook], draft: LanguageModel?, stop: StopSignal) async throws
        -> AsyncThrowingStream<TokenEvent, any Error> {
        let tokens = try tokens(continuedBy: text)
        var options = options
        options.reusesCachedPrefix = true
        return try model.container().generate(tokens: tokens, options: options, hooks: hooks, draft: draft, stop: stop, startingFrom: prefix)
    }

    var summary: String {
        "State(\(prefix.tokens.count) tokens of \(model.name); \(ActivationTrace.size(prefix.byteCount)), \(prefix.cacheType.rawValue.uppercased()) cache)"
    }

    var mimeBundle: MIMEBundle {
        let shown = text.count > 200 ? "…" + text.suffix(200) : text
        return MIMEBundle(["text/plain": summary + "\n" + shown.debugDescription,
                           "text/html": "<p>\(HTML.escape(summary))</p>\n<pre>\(HTML.escape(shown))</pre>"])
    }
}

import Executors
import GGUF
import Inference
import LumenLanguage
import Synchronization
import Tensors

extension ModelLibrary {
    static let embed = Builtin(
        name: "embed",
        signature: "embed(_ model, _ text: String or [String], pooling: String? = nil, normalize: true) -> Tensor",
        summary: "A text's embedding as llama-embedding computes it: each position's hidden state after the final norm, pooled (pooling: \"mean\", \"cls\" or \"last\"; by default as the file declares, else mean), scaled to unit length unless normalize: false. A Tensor [width], or [text][width] for an array of texts: compare with cosine(a, b)."
    ) { arguments, context in
        let model = try loadedModel(&arguments)
        let (value, location) = try arguments.requirePositional("text")
        let pooling = try arguments.labelledString("pooling").map { name throws(LumenError) in
            guard let pooling = Pooling(rawValue: name) else {
                throw LumenError(.value, "pooling: \(name.debugDescription) is not one of \(Pooling.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))", at: context.location)
            }
            return pooling
        }
        let normalize = try arguments.labelledBool("normalize") ?? true
        try arguments.finish()
        let texts: [String]
        switch value {
        case .string(let text): texts = [text]
        case .array(let elements) where !elements.isEmpty:
            texts = try elements.map { element throws(LumenError) in
                guard case .string(let text) = element else { throw LumenError(.type, "text: needs Strings, got \(element.typeName)", at: location) }
                return text
            }
        default:
            throw LumenError(.type, "text: needs a String or a non-empty array of Strings, got \(value.typeName)", at: location)
        }
        let loaded = try modelCall(at: context.location) { () throws(ModelError) in try model.model() }
        let chosen = pooling ?? Pooling.declared(by: loaded) ?? .mean
        let vectors = try await onSession(of: model, at: context.location) { session throws(ModelError) in
            var vectors: [[Float]] = []
            for text in texts { vectors.append(try await session.embedding(session.tokenize(text), pooling: chosen, normalized: normalize)) }
            return vectors
        }
        let width = loaded.configuration.embeddingLength
        guard case .array = value else { return .host(TensorObject(Tensor(vectors[0], shape: [width], axes: ["width"]))) }
        return .host(TensorObject(Tensor(vectors.flatMap { $0 }, shape: [texts.count, width], axes: ["text", "width"], labels: [texts, nil])))
    }

    static let unembedding = Builtin(
        name: "unembedding",
        signature: "unembedding(_ model) -> Tensor",
        summary: "The output matrix with the final norm's weights folded in (TransformerLens's W_U after fold_ln): [token][width], token t's logit is row t · (x / rms(x)) for the last residual stream x. For direct logit attribution: einsum(\"le,e->l\", outputs / rms, W[a] - W[b]). A loaded model only; the whole vocabulary × width as float32."
    ) { arguments, context in
        let model = try loadedModel(&arguments)
        try arguments.finish()
        let loaded = try modelCall(at: context.location) { () throws(ModelError) in try model.model() }
        // Dequantizing the whole matrix is long work: on a thread of its own, stopped by an interrupt.
        let cancelled = Atomic<Bool>(false)
        let folded = await withTaskCancellationHandler {
            await DedicatedThread.run(name: "lumen-unembedding") { loaded.foldedUnembedding(isCancelled: { cancelled.load(ordering: .relaxed) }) }
        } onCancel: {
            cancelled.store(true, ordering: .relaxed)
        }
        guard let folded else { throw CancellationError() }
        return .host(TensorObject(folded))
    }
}

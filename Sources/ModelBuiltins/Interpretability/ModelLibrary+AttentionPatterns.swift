import GGUF
import Inference
import LumenLanguage

extension ModelLibrary {
    static let attentionPatterns = Builtin(
        name: "attentionPatterns",
        signature: "attentionPatterns(_ model, _ prompt: String, block: Int, heads: Range? = nil) -> AttentionPattern",
        summary: "Each head's attention probabilities in one block over the prompt: a query × key heatmap per head, labelled with the tokens (heads: a range chooses some); .weights[head][query][key]."
    ) { arguments, context in
        let model = try loadedModel(&arguments)
        let prompt = try arguments.string(try arguments.requirePositional("prompt"), "prompt")
        guard let block = try arguments.labelledInteger("block") else {
            throw LumenError(.value, "block: is needed (the block whose attention to show)", at: context.location)
        }
        let heads = arguments.labelled("heads")
        try arguments.finish()
        let loaded = try modelCall(at: context.location) { () throws(ModelError) in try model.model() }
        let headCount = loaded.configuration.headCount
        var chosen = Array(0..<headCount)
        if let (value, location) = heads {
            guard case .range(let lower, let upper) = value, lower >= 0, upper > lower, upper <= headCount else {
                throw LumenError(.value, "heads: needs a range of the model's \(headCount) heads such as 0..<2, got \(value.printed)", at: location)
            }
            chosen = Array(lower..<upper)
        }
        let pattern = try await onSession(of: model, at: context.location) { session throws(ModelError) in
            try await session.attentionPattern(session.tokenize(prompt), block: block)
        }
        return .host(AttentionPatternObject(pattern: pattern, heads: chosen, tokenizer: loaded.tokenizer))
    }
}

import GGUF
import Inference
import LumenLanguage

extension ModelLibrary {
    static let logitLens = Builtin(
        name: "logitLens",
        signature: "logitLens(_ model, _ prompt: String, token: String? = nil) -> LogitLens",
        summary: "The logit lens: each block's residual stream at every position of the prompt, through the final norm and output matrix. Shows the top token per (block, position) shaded by probability; with token:, that token's probability at the last position after each block, as a chart."
    ) { arguments, context in
        let model = try loadedModel(&arguments)
        let prompt = try arguments.string(try arguments.requirePositional("prompt"), "prompt")
        let token = arguments.labelled("token")
        let text = try token.map { argument throws(LumenError) in try arguments.string(argument, "token") }
        try arguments.finish()
        let tokenizer = try modelCall(at: context.location) { () throws(ModelError) in try model.model() }.tokenizer
        var followed: (id: Int32, text: String)?
        if let text, let (_, location) = token {
            let ids = tokenizer.encode(text, addSpecial: false)
            guard ids.count == 1, let id = ids.first else {
                throw LumenError(.value, "token: \(text.debugDescription) is \(ids.count) tokens, not one", at: location)
            }
            followed = (id, text)
        }
        let tracked = followed.map { [$0.id] } ?? []
        let lens = try await onSession(of: model, at: context.location) { session throws(ModelError) in
            try await session.logitLens(session.tokenize(prompt), top: 1, tracking: tracked)
        }
        return .host(LogitLensObject(lens: lens, tokenizer: tokenizer, followed: followed))
    }
}

import GGUF
import GenerationTypes
import Inference
import LumenLanguage
import RunLog

extension LoadedModel: GenerativeModel {
    var place: String { "local" }

    var runModel: RunModel? {
        guard let loaded = try? model() else { return nil }
        return RunModel(loaded, name: name)
    }

    func generate(_ prompt: String, options: GenerationOptions, hooks: [any ForwardHook], stop: StopSignal) throws(ModelError)
        -> AsyncThrowingStream<TokenEvent, any Error> {
        let session = try session()
        let pipeline = hooks.isEmpty ? nil : GenerationPipeline(options: options, tokenizer: session.model.tokenizer, hooks: hooks)
        return session.generate(prompt, options: options, pipeline: pipeline, stop: stop)
    }

    func nextTokens(_ prompt: String, k: Int) async throws -> [(id: Int32?, piece: String, logProbability: Double)] {
        let session = try session()
        return try await session.nextTokenLogProbabilities(prompt, k: k).map { entry in
            (entry.id, String(decoding: session.model.tokenizer.piece(entry.id), as: UTF8.self), Double(entry.logProbability))
        }
    }

    func conversation(system: String?, template: String?, note: (String) -> Void) throws(ModelError) -> ChatSession {
        let llama = try model()
        let conversation = try Conversation(gguf: llama.gguf, vocabulary: llama.tokenizer.vocabulary, system: system, template: template)
        if let fallback = conversation.template?.origin.fallbackNote(model: name, option: "template:") {
            note(fallback + "\n")
        }
        return ChatSession(model: self, engine: LocalChat(model: self, session: try session()), conversation: conversation)
    }
}

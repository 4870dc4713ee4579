import Foundation
import Testing
@testable import Inference

/// Text embeddings against llama.cpp's (`Tests/reference/inside/embeddings.json`, made by
/// scripts/make_embedding_references.py: a context with embeddings on and the pooling type set,
/// `llama_get_embeddings_seq`, normalized as `llama-embedding` prints them), on both real models,
/// mean, first-token and last-token pooling.
@Suite("Text embeddings against llama.cpp")
struct TextEmbeddingTests {
    static func reference() throws -> [String: Any] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("reference/inside/embeddings.json")
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: path)) as? [String: Any])
    }

    /// The least cosine with llama.cpp's embedding: 0.999, except Gemma 3, whose residual stream
    /// drifts from llama.cpp's at later positions from block 11 on (`ForwardHookTests.residualCosine`),
    /// which the last token's embedding carries (0.9977–0.9988, its length before normalizing up
    /// to 3.1 % short; SmolLM2's within 1.2 %).
    static let embeddingCosine = ["gemma-3-270m-q4_k_m.gguf": 0.997]

    @Test("each text's pooled, normalized embedding is llama.cpp's (cosine ≥ 0.999; Gemma 0.997), its length before normalizing within 4 %",
          arguments: InterventionTests.models, [ActivationPrecision.float32, .quantized])
    func matchesLlamaCpp(file: String, activations: ActivationPrecision) async throws {
        let root = try Self.reference()
        let texts = try #require(root["texts"] as? [String])
        let models = try #require(root["models"] as? [String: Any])
        let entry = try #require(models[file] as? [String: Any])
        let poolings = try #require(entry["pooling"] as? [String: [[String: Any]]])
        let llama = try LanguageModel(path: try TestData.realModel(file))
        let session = ModelSession(model: llama, contextLength: 64, threads: 2, activations: activations)
        #expect(Set(poolings.keys) == Set(Pooling.allCases.map(\.rawValue)))
        for (name, cases) in poolings {
            let pooling = try #require(Pooling(rawValue: name))
            for (text, expected) in zip(texts, cases) {
                let tokens = session.tokenize(text)
                #expect(tokens.count == expected["tokens"] as? Int, "\(name) \(text.debugDescription): llama.cpp's token count")
                let ours = try await session.embedding(tokens, pooling: pooling)
                let theirs = try #require(expected["normalized"] as? [Double])
                let cosine = zip(ours, theirs).reduce(0) { $0 + Double($1.0) * $1.1 }
                #expect(cosine >= Self.embeddingCosine[file, default: 0.999], "\(name) \(text.debugDescription): cosine \(cosine)")
                #expect(abs(ours.reduce(0) { $0 + Double($1) * Double($1) } - 1) < 1e-4)
                let raw = try await session.embedding(tokens, pooling: pooling, normalized: false)
                let length = raw.reduce(0) { $0 + Double($1) * Double($1) }.squareRoot(), expectedLength = try #require(expected["norm"] as? Double)
                #expect(abs(length / expectedLength - 1) < 0.04, "\(name) \(text.debugDescription): length \(length), llama.cpp's \(expectedLength)")
            }
        }
        // Neither file declares a pooling type: a generative model's files usually do not.
        #expect(Pooling.declared(by: llama) == nil)
    }
}

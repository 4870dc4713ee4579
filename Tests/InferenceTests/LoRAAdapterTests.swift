import Foundation
import GGUF
import Testing
@testable import Inference

/// LoRA adapters against llama.cpp with the same adapters (`Tests/reference/lora/`, made by
/// scripts/make_lora_references.py through llama-cpp-python's `llama_adapter_lora_init` and
/// `llama_set_adapters_lora` from the seeded adapters of scripts/make_lora_adapters.py): the
/// bounds of the real-model tests (`RealModelTests.checkFidelity`), and the adapters llama.cpp
/// refuses refused here too, naming the tensor.
@Suite("LoRA adapters")
struct LoRAAdapterTests {
    static let references = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("reference/lora")

    /// The folder of the adapters `make adapters` writes.
    static var adapterFolder: String { ProcessInfo.processInfo.environment["LUMEN_ADAPTERS"] ?? ".build/adapters" }

    /// The adapter `name` (`make adapters`), or a recorded issue saying how to make it.
    static func adapter(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> LoRAAdapter {
        let path = adapterFolder + "/\(name)"
        guard FileManager.default.fileExists(atPath: path) else {
            Issue.record("\(path) is missing: run `make adapters` (scripts/make_lora_adapters.py)", sourceLocation: sourceLocation)
            throw TestData.MissingTestData()
        }
        return try LoRAAdapter(contentsOf: path)
    }

    /// Every reference case: one adapter on each synthetic model and on four of llama.cpp's
    /// random-weight ones (whose per-tensor scales meet the adapters' products); one, two with
    /// different scales (one negative) and an F16 one on SmolLM2; one on Gemma 3.
    /// On the portable kernels (`make test-portable`), three: the F16 adapter on SmolLM2, the fused
    /// rows of Phi-3 and the scales of llama.cpp's random-weight Llama — what the kernels meet
    /// differently; the rest of the adapters' arithmetic is the kernels' own, checked there by the
    /// models' tests.
    static let cases: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: references.path)) ?? []
        let all = names.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(".json".count)) }.sorted()
        return RealModelTests.portable ? all.filter(["smollm2-f16", "phi3", "llama-dense"].contains) : all
    }()

    /// A reference case: its JSON, where it comes from (`synthetic`, `arch` or `real`), the
    /// model's file name without `.gguf`, the model, and the adapters it was made with.
    struct Reference {
        let root: [String: Any]
        let source: String
        let stem: String
        let model: LanguageModel
        let adapters: AdapterSet
    }

    /// Reference case `name`, its model and adapters read and checked to be the ones it was made from.
    static func reference(_ name: String) throws -> Reference {
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: references.appendingPathComponent("\(name).json"))) as? [String: Any])
        let file = try #require(root["model"] as? String), stem = String(file.dropLast(".gguf".count))
        let source = try #require(root["source"] as? String)
        let path = switch source {
        case "synthetic": try TestData.syntheticModel(stem)
        case "arch": try TestData.architectureModel(file)
        default: try TestData.realModel(file)
        }
        #expect(SHA256Hex.of(file: path) == root["model_sha256"] as? String, "\(path) is not the model the references were made from")
        let model = try LanguageModel(path: path)
        var chosen: [(adapter: LoRAAdapter, scale: Float)] = []
        for entry in try #require(root["adapters"] as? [[String: Any]]) {
            let adapter = try adapter(try #require(entry["adapter"] as? String))
            #expect(SHA256Hex.of(file: adapter.path) == entry["adapter_sha256"] as? String,
                    "\(adapter.path) is not the adapter the references were made from; run make adapters")
            chosen.append((adapter, Float(try #require(entry["scale"] as? Double))))
        }
        return Reference(root: root, source: source, stem: stem, model: model, adapters: try AdapterSet(chosen, for: model))
    }

    /// The largest logit difference to llama.cpp's reference that counts as equal for `reference`
    /// (as the models' own tests: llama.cpp's random-weight models to 0.001 a logit, every step
    /// whose top two differ by more than that counted; the synthetic ones that compare logit for
    /// logit to 0.001 too), nil for the distribution bounds of the real-model tests.
    static func exactBound(_ reference: Reference) -> Float? {
        let exact = reference.source == "arch" || (reference.source == "synthetic" && RealModelTests.comparedLogitForLogit.contains(reference.stem))
        return exact ? 0.001 : nil
    }

    @Test("logits with adapters match llama.cpp's with the same adapters, within the real-model bounds", arguments: cases)
    func fidelity(name: String) throws {
        let reference = try Self.reference(name)
        let (root, model, adapters, source) = (reference.root, reference.model, reference.adapters, reference.source)
        // The adapters change the model: without them, the first logits are far from llama.cpp's
        // with them (further than 50 times the synthetic models' bound; the synthetic Qwen 3 is
        // so sure of its next token that the distribution hardly moves, but its logits do).
        let prompt = ReferenceCase(promptIDs: model.tokenizer.encode(try #require((root["cases"] as? [[String: Any]])?.first?["prompt"] as? String)),
                                   greedyIDs: [], greedyText: "", logits: [], topMargins: [], f64Logits: nil, f64GreedyIDs: nil)
        let plain = try teacherForcedLogits(model, prompt, steps: 1, threads: 2, activations: .quantized)[0]
        let binary = try Data(contentsOf: Self.references.appendingPathComponent("\(name).logits.bin"))
        let expected = Array(binary.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }.prefix(model.configuration.vocabularySize))
        #expect(maxAbsDifference(expected, plain) > 0.05, "the adapters hardly change the logits: the case tests nothing")
        try RealModelTests.checkFidelity(model, reference: root, logitsDirectory: Self.references.path, activations: .quantized,
                                         minimumMargin: source == "arch" ? 0.001 : 0.1, maximumDifference: Self.exactBound(reference), adapters: adapters)
    }

    @Test("an adapter reads as llama.cpp reads it: its weights, ranks, alpha and size")
    func contents() throws {
        let adapter = try Self.adapter("smollm2-r16.gguf")
        #expect(adapter.architecture == "llama")
        #expect(adapter.alpha == 16)
        #expect(adapter.ranks == [16])
        // 30 blocks × attention's four and the feed-forward's three projections (the output is the embedding).
        #expect(adapter.adaptedTensors.count == 30 * 7)
        #expect(adapter.adaptedTensors.contains("blk.29.ffn_down.weight"))
        #expect(adapter.byteCount == 30 * 16 * 4 * (576 + 576 + 2 * (576 + 192) + 576 + 576 + 3 * (576 + 1536)))
    }

    @Test("a session reuses a cached prefix only under the adapters it was computed under")
    func cacheUnderAdapters() async throws {
        let model = try LanguageModel(path: try TestData.syntheticModel("llama3"))
        let adapters = try AdapterSet([(try Self.adapter("llama3-r8.gguf"), 1)], for: model)
        let session = ModelSession(model: model, contextLength: 64, threads: 1, batchSize: 4, adapters: adapters)
        let prompt = model.tokenizer.encode("An adapter changes what the model says next, a little")
        #expect(prompt.count > 8)
        #expect(try await session.prefill(prompt) == 0)
        // Read again under the same adapters: its whole batches are reused.
        #expect(try await session.prefill(prompt) == (prompt.count - 1) / 4 * 4)
        try await session.useAdapters(adapters)
        #expect(try await session.prefill(prompt) == (prompt.count - 1) / 4 * 4)
        // Under none, or the same adapter at another scale, nothing computed before is reused.
        try await session.useAdapters(.none)
        #expect(try await session.prefill(prompt) == 0)
        try await session.useAdapters(try AdapterSet([(adapters.entries[0].adapter, 0.5)], for: model))
        #expect(try await session.prefill(prompt) == 0)
        // Adapters checked against another model are refused, naming both.
        let other = try LanguageModel(path: try TestData.syntheticModel("olmo2"))
        await #expect {
            try await ModelSession(model: other, contextLength: 64, threads: 1).useAdapters(adapters)
        } throws: { "\($0)".contains("another model") && "\($0)".contains("llama3.gguf") }
    }

    /// Generations of `prompts`, each under its own adapters of `sets` (nil: the session's, none),
    /// decoded together on one session, and each alone on a session of its own whose every pass
    /// applies its adapters (the path the fidelity cases check against llama.cpp); the shared
    /// session, and a request of prompt `index` under adapters `adapters`.
    static func decodedTogetherAndAlone(_ model: LanguageModel, prompts: [String], sets: [AdapterSet?]) async throws
        -> (together: [BatchedDecodingTests.Run], alone: [BatchedDecodingTests.Run], session: ModelSession,
            request: (Int, AdapterSet?) throws -> ModelSession.GenerationRequest) {
        func request(_ index: Int, adapters: AdapterSet?) throws -> ModelSession.GenerationRequest {
            let options = BatchedDecodingTests.options(index)
            var pipeline = try GenerationPipeline(options: options, model: model)
            pipeline.adapters = adapters
            return ModelSession.GenerationRequest(tokens: model.tokenizer.encode(prompts[index]), options: options, pipeline: pipeline)
        }
        var alone: [BatchedDecodingTests.Run] = []
        for index in prompts.indices {
            let single = try request(index, adapters: nil)
            let session = ModelSession(model: model, threads: 2, batchSize: 8, adapters: sets[index] ?? .none)
            alone.append(try await BatchedDecodingTests.collect(session.generate(tokens: single.tokens, options: single.options, pipeline: single.pipeline)))
        }
        let session = ModelSession(model: model, threads: 2, batchSize: 8, sequences: prompts.count)
        let together = try await BatchedDecodingTests.together(session, try prompts.indices.map { try request($0, adapters: sets[$0]) })
        return (together, alone, session, request)
    }

    @Test("generations with adapters of their own decode together with others, each as alone under its adapters, logit for logit")
    func adaptersPerGeneration() async throws {
        let model = try LanguageModel(path: try TestData.realModel(SpeculativeDecodingTests.realModels[0]))
        let (a, b) = (try Self.adapter("smollm2-r16.gguf"), try Self.adapter("smollm2-r8.gguf"))
        let sets: [AdapterSet?] = [nil, try AdapterSet([(a, 1)], for: model), try AdapterSet([(a, -0.5), (b, 0.7)], for: model), AdapterSet.none]
        // The first two share a prompt: the adapted one must not start from the plain one's cache.
        let prompts = ["The capital of France is", "The capital of France is", "Write a haiku about the sea.", "One, two, three,"]
        let (together, alone, session, request) = try await Self.decodedTogetherAndAlone(model, prompts: prompts, sets: sets)
        BatchedDecodingTests.expectSame(together, alone, "adapters")
        #expect(session.batchStatistics.largest >= 3, "\(session.batchStatistics)")
        #expect(alone[0].logits[0] != alone[1].logits[0], "the adapter changes the first token's logits")
        // The prompt read under the adapter is reused under the same adapter, and gives the same.
        var again = try request(1, sets[1])
        again.options.reusesCachedPrefix = true
        var reused = 0
        var logits: [[Float]] = []
        for try await event in session.generate(tokens: again.tokens, options: again.options, pipeline: again.pipeline) {
            switch event {
            case .token(let token): logits.append(token.logits ?? [])
            case .finished(let summary): reused = summary.reusedPromptTokens
            }
        }
        #expect(reused == again.tokens.count - 1 || reused == again.tokens.count, "reused \(reused) of \(again.tokens.count)")
        let sameFirstLogits = logits.first == alone[1].logits.first
        #expect(sameFirstLogits, "the first token's logits, from the reused prompt")
        // Adapters checked against another model are refused in the generation's stream.
        let other = try LanguageModel(path: try TestData.syntheticModel("llama3"))
        let foreign = try request(0, try AdapterSet([(try Self.adapter("llama3-r8.gguf"), 1)], for: other))
        await #expect {
            for try await _ in session.generate(tokens: foreign.tokens, options: foreign.options, pipeline: foreign.pipeline) {}
        } throws: { "\($0)".contains("another model") }
    }

    @Test("an expert's rows, gathered from generations under different adapters, each get their own sequence's adapters")
    func expertsPerGeneration() async throws {
        let model = try LanguageModel(path: try TestData.syntheticModel("qwen3moe"))
        let experts = try Self.adapter("qwen3moe-experts-r8.gguf")
        let sets: [AdapterSet?] = [nil, try AdapterSet([(experts, 1)], for: model), try AdapterSet([(experts, -0.7)], for: model)]
        let prompts = ["An adapter changes what", "An adapter changes what", "the experts say next"]
        let (together, alone, session, _) = try await Self.decodedTogetherAndAlone(model, prompts: prompts, sets: sets)
        BatchedDecodingTests.expectSame(together, alone, "experts' adapters")
        #expect(session.batchStatistics.largest >= 2, "\(session.batchStatistics)")
        #expect(alone[0].logits[0] != alone[1].logits[0], "the experts' adapter changes the first token's logits")
    }

    /// Writes an adapter GGUF: `metadata` strings, then F32 tensors of the shapes given, filled with 0.01.
    static func writeAdapter(_ path: String, metadata: [String: String], tensors: [(String, [Int])]) throws {
        var writer = GGUFWriter(tensorCount: tensors.count, metadataCount: metadata.count)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { writer.appendMetadata(key, string: value) }
        var offset = 0
        for (name, shape) in tensors {
            writer.appendTensor(name: name, shape: shape, type: .f32, offset: offset)
            offset += (shape.reduce(1, *) * 4 + 31) / 32 * 32
        }
        writer.padToAlignment(32)
        try Data(writer.bytes + [UInt8](repeating: 0, count: offset)).write(to: URL(fileURLWithPath: path))
    }

    static let llamaAdapter = ["general.type": "adapter", "adapter.type": "lora", "general.architecture": "llama"]

    /// Adapters llama.cpp refuses, and what the refusal must name.
    static let refusals: [(name: String, metadata: [String: String], tensors: [(String, [Int])], message: [String])] = [
        ("not an adapter", ["general.type": "model", "general.architecture": "llama"], [("blk.0.attn_q.weight.lora_a", [64, 8])],
         ["general.type", "not a LoRA adapter"]),
        ("another kind of adapter", ["general.type": "adapter", "adapter.type": "control_vector", "general.architecture": "llama"],
         [("blk.0.attn_q.weight.lora_a", [64, 8])], ["adapter.type", "\"lora\""]),
        ("half a pair", llamaAdapter, [("blk.0.attn_q.weight.lora_a", [64, 8])], ["blk.0.attn_q.weight.lora_b", "is missing"]),
        ("ranks that differ", llamaAdapter, [("blk.0.attn_q.weight.lora_a", [64, 8]), ("blk.0.attn_q.weight.lora_b", [4, 64])],
         ["blk.0.attn_q.weight.lora_a", "ranks differ"]),
        ("a tensor of no pair", llamaAdapter, [("blk.0.attn_q.weight.delta", [64, 8])], ["blk.0.attn_q.weight.delta", "neither"]),
        ("another architecture", ["general.type": "adapter", "adapter.type": "lora", "general.architecture": "qwen2"],
         [("blk.0.attn_q.weight.lora_a", [64, 8]), ("blk.0.attn_q.weight.lora_b", [8, 64])], ["general.architecture", "\"qwen2\"", "\"llama\""]),
        ("a weight the model lacks", llamaAdapter, [("blk.9.attn_q.weight.lora_a", [64, 8]), ("blk.9.attn_q.weight.lora_b", [8, 64])],
         ["blk.9.attn_q.weight", "does not have"]),
        ("a weight of another shape", llamaAdapter, [("blk.0.attn_q.weight.lora_a", [96, 8]), ("blk.0.attn_q.weight.lora_b", [8, 64])],
         ["blk.0.attn_q.weight", "[96, 64]", "[64, 64]"]),
        ("stacks of different numbers of experts", llamaAdapter,
         [("blk.0.attn_q.weight.lora_a", [64, 8, 4]), ("blk.0.attn_q.weight.lora_b", [8, 64, 2])], ["blk.0.attn_q.weight.lora_a", "one per expert"]),
        ("experts' pairs for a weight that is one matrix", llamaAdapter,
         [("blk.0.attn_q.weight.lora_a", [64, 8, 4]), ("blk.0.attn_q.weight.lora_b", [8, 64, 4])], ["blk.0.attn_q.weight", "[64, 64, 4]", "has [64, 64]"]),
        ("a weight llama.cpp multiplies without adapters", llamaAdapter,
         [("blk.0.attn_norm.weight.lora_a", [64, 8]), ("blk.0.attn_norm.weight.lora_b", [8, 1])], ["blk.0.attn_norm.weight"]),
    ]

    @Test("adapters llama.cpp refuses are refused, naming the file and the tensor or key", arguments: refusals.indices)
    func refused(index: Int) throws {
        let refusal = Self.refusals[index]
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/adapter.gguf"
        try Self.writeAdapter(path, metadata: refusal.metadata, tensors: refusal.tensors)
        let model = try LanguageModel(path: try TestData.syntheticModel("llama3"))
        #expect {
            _ = try AdapterSet([(try LoRAAdapter(contentsOf: path), 1)], for: model)
        } throws: { error in
            let text = "\(error)"
            return text.contains(path) && refusal.message.allSatisfy(text.contains)
        }
    }

    @Test("an adapter of the token embedding of a model whose output is that embedding is refused, as llama.cpp cannot apply it")
    func tiedEmbedding() throws {
        let model = try LanguageModel(path: try TestData.syntheticModel("qwen3"))
        let width = model.configuration.embeddingLength, vocabulary = model.configuration.vocabularySize
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/embedding.gguf"
        try Self.writeAdapter(path, metadata: ["general.type": "adapter", "adapter.type": "lora", "general.architecture": "qwen3"],
                              tensors: [("token_embd.weight.lora_a", [4, vocabulary]), ("token_embd.weight.lora_b", [4, width])])
        #expect {
            _ = try AdapterSet([(try LoRAAdapter(contentsOf: path), 1)], for: model)
        } throws: { "\($0)".contains("token_embd.weight") && "\($0)".contains("output matrix is that embedding") }
    }
}

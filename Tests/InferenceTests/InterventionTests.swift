import Foundation
import Testing
@testable import Inference

/// Ablations and activation patching against llama.cpp changing the same tensors in its own
/// graph (`Tests/reference/inside/interventions.json`, made by
/// scripts/make_intervention_references.py through its eval callback): zeroing heads' outputs
/// (`kqv_out`), a block's attention or feed-forward output, and patching the residual stream
/// (`l_out`) of one prompt into another, on both real models.
@Suite("Interventions against llama.cpp")
struct InterventionTests {
    static func reference() throws -> [String: Any] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("reference/inside/interventions.json")
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: path)) as? [String: Any])
    }

    static let models = ["SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf"]

    static func logSoftmax(_ logits: [Float]) -> [Double] {
        let largest = Double(logits.max() ?? 0)
        let total = logits.reduce(0.0) { $0 + exp(Double($1) - largest) }
        return logits.map { Double($0) - largest - log(total) }
    }

    /// Lumen's logits after the case's prompt with its intervention, made from the case as the
    /// reference describes it.
    static func changedLogits(_ session: ModelSession, _ c: [String: Any]) async throws -> [Float] {
        let configuration = session.model.configuration
        let tokens = try #require(c["tokens"] as? [Int]).map(Int32.init)
        let hook: any ForwardHook
        if let ablate = c["ablate"] as? [String: Any] {
            let name = try #require(ablate["point"] as? String)
            let point = try #require(ActivationPoint(name: name))
            let block = try #require(ablate["block"] as? Int)
            hook = ActivationEdit.zeroing(point, block: block, heads: point == .headOutputs ? ablate["heads"] as? [Int] ?? [] : [],
                                          headDimension: configuration.headDimension)
        } else if let edit = c["edit"] as? [String: Any] {
            let name = try #require(edit["point"] as? String)
            let add = (edit["add"] as? [Double])?.map(Float.init) ?? []
            hook = ActivationEdit(try #require(ActivationPoint(name: name)), block: edit["block"] as? Int ?? 0, positions: edit["positions"] as? [Int],
                                  heads: edit["heads"] as? [Int] ?? [], headDimension: configuration.headDimension, neurons: edit["neurons"] as? [Int] ?? [],
                                  scale: Float(edit["scale"] as? Double ?? 1), addition: add)
        } else {
            let patch = try #require(c["patch"] as? [String: Any])
            let name = try #require(patch["point"] as? String)
            let point = try #require(ActivationPoint(name: name))
            let block = try #require(patch["block"] as? Int)
            let text = try #require(c["source"] as? String)
            let source = session.tokenize(text)
            let capture = ActivationCapture([point], blocks: [block])
            _ = try await session.evaluate(source, hooks: [capture])
            hook = ActivationPatch(point, block: block, source: capture.rows(point, block: block),
                                   width: point.width(in: configuration, contextLength: 0), positions: patch["positions"] as? [Int] ?? [])
        }
        return try await session.evaluate(tokens, hooks: [hook])
    }

    @Test("an ablation, an edit (scaled MLP neurons, added residual and embedding elements, flipped heads) or a patch moves the next-token distribution as it moves llama.cpp's",
          arguments: models, [ActivationPrecision.float32, .quantized])
    func matchesLlamaCpp(file: String, activations: ActivationPrecision) async throws {
        let llama = try LanguageModel(path: try TestData.realModel(file))
        let session = ModelSession(model: llama, contextLength: 64, threads: 2, activations: activations)
        let models = try #require(try Self.reference()["models"] as? [String: Any])
        let cases = try #require((models[file] as? [String: Any])?["cases"] as? [[String: Any]])
        #expect(cases.count == 8)
        for c in cases {
            let name = try #require(c["name"] as? String)
            let changed = try #require(c["changed"] as? [String: Any]), plain = try #require(c["plain"] as? [String: Any])
            let ids = try #require(changed["ids"] as? [Int]), expected = try #require(changed["logprobs"] as? [Double])
            let plainIDs = try #require(plain["ids"] as? [Int]), plainExpected = try #require(plain["logprobs"] as? [Double])
            let tokens = try #require(c["tokens"] as? [Int]).map(Int32.init)
            let prompt = try #require(c["prompt"] as? String)
            #expect(session.tokenize(prompt) == tokens, "\(name): llama.cpp's tokens")
            let ours = Self.logSoftmax(try await Self.changedLogits(session, c))
            let ourPlain = Self.logSoftmax(try await session.evaluate(tokens))
            // Over llama.cpp's 20 likeliest tokens after the change, Lumen's distribution (both
            // renormalized to those tokens) is within KL 0.02 of llama.cpp's, and its first
            // token is Lumen's first where its margin is clear.
            let divergence = Self.divergence(expected, ids.map { ours[$0] })
            #expect(divergence <= 0.02, "\(name): KL \(divergence) from llama.cpp's changed distribution")
            if expected[0] - expected[1] > 0.1 {
                #expect(ours.indices.max { ours[$0] < ours[$1] } == ids[0], "\(name): llama.cpp's top token \(ids[0])")
            }
            #expect(Self.divergence(plainExpected, plainIDs.map { ourPlain[$0] }) <= 0.02, "\(name): the unchanged distribution is llama.cpp's")
            // The change is real: without it, Lumen's distribution is at least five times further
            // from llama.cpp's changed one than with it.
            let unchanged = Self.divergence(expected, ids.map { ourPlain[$0] })
            #expect(unchanged > 5 * divergence, "\(name): KL \(divergence) from llama.cpp's changed distribution with the intervention, \(unchanged) without")
        }
    }

    /// KL(p‖q) of two distributions given as log-probabilities of the same tokens, each
    /// renormalized to them.
    static func divergence(_ p: [Double], _ q: [Double]) -> Double {
        func normalized(_ values: [Double]) -> [Double] {
            let largest = values.max() ?? 0
            let total = log(values.reduce(0) { $0 + exp($1 - largest) }) + largest
            return values.map { $0 - total }
        }
        return zip(normalized(p), normalized(q)).reduce(0) { $0 + exp($1.0) * ($1.0 - $1.1) }
    }

    @Test("an ablation, edit or patch that does not fit the model or the run is refused before the pass runs")
    func misfitsAreRefused() async throws {
        let llama = try LanguageModel(path: try TestData.realModel(Self.models[0]))
        let session = ModelSession(model: llama, contextLength: 64, threads: 2)
        let tokens = session.tokenize("The capital of France is")
        let c = llama.configuration
        let misfits: [(any ForwardHook, String)] = [
            (ActivationEdit.zeroing(.headOutputs, block: 0, heads: [c.headCount], headDimension: c.headDimension), "head \(c.headCount) is not one of block 0's \(c.headCount) heads"),
            (ActivationEdit.zeroing(.attentionOutput, block: c.blockCount), "block \(c.blockCount) is not one of the model's \(c.blockCount) blocks"),
            (ActivationEdit.zeroing(.attentionProbabilities, block: 0), "pattern cannot be changed: the pass does not read it back"),
            (ActivationEdit(.embedding, block: 3, scale: 2), "embed is not in a block: give block 0 (none)"),
            (ActivationEdit.zeroing(.blockOutput, block: 0, heads: [0], headDimension: c.headDimension), "resid_post has no heads"),
            (ActivationEdit(.feedForwardActivation, block: 1, neurons: [c.feedForwardLength], scale: 2),
             "neuron \(c.feedForwardLength) is not one of the \(c.feedForwardLength) of a mlp_post row of block 1 (0…\(c.feedForwardLength - 1))"),
            (ActivationEdit(.headOutputs, block: 0, heads: [1], headDimension: c.headDimension, neurons: [c.headDimension], scale: 2),
             "neuron \(c.headDimension) is not one of the \(c.headDimension) of a head of z in block 0"),
            (ActivationEdit(.blockMiddle, block: 2, neurons: [0, 1, 2], scale: 1, addition: [1, 2]),
             "the addition has 2 values, but 3 elements of each resid_mid row of block 2 are chosen: give one number or 3"),
            (ActivationEdit(.blockMiddle, block: 2, scale: .nan), "the scale and the addition must be finite numbers"),
            (ActivationEdit(.blockMiddle, block: 2, positions: [tokens.count], scale: 2),
             "position \(tokens.count) is not one of this run's \(tokens.count) positions (0…\(tokens.count - 1))"),
            (ActivationPatch(.blockOutput, block: 0, source: [Float](repeating: 0, count: 3 * 8), width: 8, positions: [0]),
             "the patched rows have 8 floats, but the model's resid_post rows have \(c.embeddingLength)"),
            (ActivationPatch(.blockOutput, block: 0, source: [Float](repeating: 0, count: c.embeddingLength), width: c.embeddingLength, positions: [2]),
             "position 2 is not one of the source's 1 positions"),
            // The silent no-op: a patch of a longer run's positions into a shorter run.
            (ActivationPatch(.blockOutput, block: 0, source: [Float](repeating: 0, count: 8 * c.embeddingLength), width: c.embeddingLength, positions: [6]),
             "the source run has 8 tokens and this one \(tokens.count): give positions: (this run's) and from: (the source's)"),
            (ActivationPatch(.blockOutput, block: 0, source: [Float](repeating: 0, count: 8 * c.embeddingLength), width: c.embeddingLength, positions: [6], from: [6]),
             "position 6 is not one of this run's \(tokens.count) positions (0…\(tokens.count - 1))"),
        ]
        for (hook, reason) in misfits {
            await #expect { _ = try await session.evaluate(tokens, hooks: [hook]) } throws: { error in
                "\(error)".contains(reason)
            }
        }
    }
}

import Foundation
import GGUF
import Inference
import SparseAutoencoders
import Tensors
import Testing

/// SAEs in SAELens' and Gemma Scope's files against a NumPy implementation of SAELens' formulas,
/// applied to llama.cpp's own activations (`Tests/reference/sae/`, made by
/// `scripts/make_sae_references.py` from `reference/inside/smollm2-acts.l_out.bin` of the shared
/// folder). Each position's tolerance is 8 times the oracle's own spread there (NumPy in float32
/// against float64), at least 8 float32 units of the largest value.
struct SparseAutoencoderTests {
    struct Reference {
        let name: String, path: String, architecture: String, k: Int?, block: Int, plantedFeature: Int?
        let spreadFeatures: [Double], spreadReconstruction: [Double]
    }

    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("reference/sae")

    static func references() throws -> [Reference] {
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("references.json"))) as? [String: Any])
        let saes = try #require(root["saes"] as? [[String: Any]])
        return try saes.map { entry in
            Reference(name: try #require(entry["name"] as? String), path: try #require(entry["path"] as? String),
                      architecture: try #require(entry["architecture"] as? String), k: entry["k"] as? Int, block: try #require(entry["block"] as? Int),
                      plantedFeature: entry["planted_feature"] as? Int, spreadFeatures: try #require(entry["spread_features"] as? [Double]),
                      spreadReconstruction: try #require(entry["spread_reconstruction"] as? [Double]))
        }
    }

    /// The arrays NumPy computed, by name.
    static func expected() throws -> [String: Tensor] {
        let arrays = try NumPyArchive.decode(Data(contentsOf: folder.appendingPathComponent("expected.npz")))
        return Dictionary(uniqueKeysWithValues: arrays.map { ($0.name, Tensor($0.values, shape: $0.shape)) })
    }

    /// llama.cpp's residual stream after `block` for SmolLM2's prompt: [position][576].
    static func activations(block: Int) throws -> Tensor {
        let path = try TestData.path("reference/inside/smollm2-acts.l_out.bin")
        let values = try Data(contentsOf: URL(fileURLWithPath: path)).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let (width, tokens) = (576, 5)
        return Tensor(Array(values[(block * tokens * width)..<((block + 1) * tokens * width)]), shape: [tokens, width])
    }

    /// Each row of `actual` within `multiple` × `spread[row]` of `expected`'s (at least that many
    /// float32 units of the row's largest value).
    static func expectClose(_ actual: Tensor, _ expected: Tensor, spread: [Double], multiple: Double = 8, _ what: String) {
        #expect(actual.shape == expected.shape, "\(what): shape \(actual.shape), expected \(expected.shape)")
        guard actual.shape == expected.shape else { return }
        let width = expected.shape[1]
        for row in 0..<expected.shape[0] {
            let range = (row * width)..<((row + 1) * width)
            let largest = expected.values[range].map { Double(abs($0)) }.max() ?? 0
            let tolerance = multiple * max(spread[row], largest * 0x1p-24)
            let worst = range.map { Double(abs(actual.values[$0] - expected.values[$0])) }.max() ?? 0
            #expect(worst <= tolerance, "\(what), position \(row): differs by \(worst), tolerance \(tolerance)")
        }
    }

    @Test("every architecture and format encodes and decodes llama.cpp's activations as NumPy does")
    func encodesAndDecodesAsNumPy() throws {
        let expected = try Self.expected()
        let references = try Self.references()
        #expect(Set(references.map(\.architecture)) == ["standard", "jumprelu", "topk"])
        for reference in references {
            let sae = try SparseAutoencoder.load(path: Self.folder.appendingPathComponent(reference.path).path)
            #expect(sae.architecture.name == reference.architecture)
            #expect(sae.point == .blockOutput && sae.block == reference.block, "\(reference.name): \(sae.hookName)")
            #expect(sae.hookName == "blocks.\(reference.block).hook_resid_post")
            if let k = reference.k { #expect(sae.architecture == .topK(k)) }
            let x = try Self.activations(block: reference.block)
            let features = try sae.encode(x)
            Self.expectClose(features, try #require(expected["\(reference.name).features"]), spread: reference.spreadFeatures, "\(reference.name) features")
            // Features fire where NumPy's fire and nowhere else: no feature flips across a threshold.
            let firing = features.values.map { $0 > 0 }, expectedFiring = try #require(expected["\(reference.name).features"]).values.map { $0 > 0 }
            #expect(firing == expectedFiring, "\(reference.name): features fire elsewhere than NumPy's")
            let reconstruction = try sae.decode(features)
            Self.expectClose(reconstruction, try #require(expected["\(reference.name).reconstruction"]), spread: reference.spreadReconstruction,
                             "\(reference.name) reconstruction")
            // Chosen features alone (what a clamp encodes) are NumPy's too, in the order asked.
            let chosen = [sae.featureCount - 1, 0, 7]
            let some = try sae.encode(x, features: chosen)
            let someExpected = try #require(expected["\(reference.name).features"])
            let columns = Tensor((0..<x.shape[0]).flatMap { row in chosen.map { someExpected.values[row * sae.featureCount + $0] } }, shape: [x.shape[0], chosen.count])
            Self.expectClose(some, columns, spread: reference.spreadFeatures, "\(reference.name) features \(chosen)")
            if let planted = reference.plantedFeature {
                // The planted feature fires at the last position only.
                let column = (0..<x.shape[0]).map { features.values[$0 * sae.featureCount + planted] > 0 }
                #expect(column == [false, false, false, false, true])
            }
        }
    }

    @Test("a direction is the decoder's row; a leading axis and its labels stay")
    func directionsAndAxes() throws {
        let sae = try SparseAutoencoder.load(path: Self.folder.appendingPathComponent("saelens-standard-f32").path)
        let direction = try sae.direction(3)
        #expect(Array(direction.values) == Array(sae.decoder.values[(3 * 576)..<(4 * 576)]))
        #expect(throws: TensorError.self) { try sae.direction(sae.featureCount) }
        let x = try Self.activations(block: 6).labelled(axes: ["position", "width"], labels: [["a", "b", "c", "d", "e"], nil])
        let features = try sae.encode(x)
        #expect(features.axes == ["position", "feature"] && features.labels[0] == ["a", "b", "c", "d", "e"])
        // One row alone (rows of dot products) gives that row of the batch (the packed product)
        // within float32 rounding.
        let row = try sae.encode(Tensor(Array(x.values[576..<1152]), shape: [576]))
        #expect(row.shape == [sae.featureCount])
        for (a, b) in zip(row.values, features.values[sae.featureCount..<(2 * sae.featureCount)]) { #expect(abs(a - b) <= 1e-5 * max(1, abs(b))) }
        #expect(throws: TensorError.self) { try sae.encode(Tensor([Float](repeating: 0, count: 575), shape: [575])) }
        #expect(throws: TensorError.self) { try sae.decode(Tensor([Float](repeating: 0, count: 3), shape: [3])) }
    }

    @Test("an input scale folds into the weights as SAELens folds it")
    func inputScale() throws {
        let path = Self.folder.appendingPathComponent("saelens-standard-f32").path
        let plain = try SparseAutoencoder.load(path: path), scaled = try SparseAutoencoder.load(path: path, inputScale: 2)
        let x = try Self.activations(block: 6)
        // Encoding x with the scale folded in is encoding 2x with the plain SAE; decoding divides by 2.
        let fromScaled = try scaled.encode(x), fromDoubled = try plain.encode(x.combined(.multiply, scalar: 2))
        for (a, b) in zip(fromScaled.values, fromDoubled.values) { #expect(abs(a - b) <= 1e-4 * max(1, abs(b))) }
        #expect(throws: ModelError.self) { try SparseAutoencoder.load(path: path, inputScale: 0) }
    }

    @Test("hook names are TransformerLens's, each point's own")
    func hookNames() {
        for point in ActivationPoint.allCases {
            guard let name = point.hookName(block: 7) else { continue }
            let parsed = ActivationPoint.parse(hookName: name)
            #expect(parsed?.point == point && parsed?.block == (point.layout.perBlock ? 7 : nil), "\(name)")
        }
        #expect(ActivationPoint.parse(hookName: "blocks.3.attn.hook_q")?.point == .queries)
        #expect(ActivationPoint.parse(hookName: "blocks.3.hook_nothing") == nil)
        #expect(ActivationPoint.parse(hookName: "blocks.x.hook_resid_post") == nil)
        #expect(ActivationPoint.parse(hookName: "hook_resid_post") == nil)
    }

    @Test("bad files are errors naming the file and what is wrong")
    func badFiles() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("lumen-sae-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let source = Self.folder.appendingPathComponent("saelens-standard-f32")
        func folder(_ name: String, config: (inout [String: Any]) -> Void, weights: Data? = nil) throws -> String {
            let made = scratch.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
            var cfg = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: source.appendingPathComponent("cfg.json"))) as? [String: Any])
            config(&cfg)
            try JSONSerialization.data(withJSONObject: cfg).write(to: made.appendingPathComponent("cfg.json"))
            try (weights ?? Data(contentsOf: source.appendingPathComponent("sae_weights.safetensors"))).write(to: made.appendingPathComponent("sae_weights.safetensors"))
            return made.path
        }
        func failure(_ path: String) -> ModelError? {
            do {
                _ = try SparseAutoencoder.load(path: path)
                return nil
            } catch {
                return error
            }
        }
        let gated = failure(try folder("gated") { $0["architecture"] = "gated" })
        #expect(gated?.field == "architecture" && gated?.reason.contains("gated") == true)
        let norm = failure(try folder("norm") { $0["normalize_activations"] = "layer_norm" })
        #expect(norm?.field == "normalize_activations")
        let hook = failure(try folder("hook") { $0["hook_name"] = "blocks.6.hook_nowhere" })
        #expect(hook?.field == "hook_name" && hook?.reason.contains("blocks.6.hook_nowhere") == true)
        let width = failure(try folder("width") { $0["d_in"] = 512 })
        #expect(width?.field == "d_in")
        let topk = failure(try folder("topk") { $0["architecture"] = "topk" })
        #expect(topk?.field == "k")
        // A truncated weights file names the tensor whose bytes are missing.
        let whole = try Data(contentsOf: source.appendingPathComponent("sae_weights.safetensors"))
        let truncated = failure(try folder("truncated", config: { _ in }, weights: whole.prefix(whole.count - 100)))
        #expect(truncated != nil && truncated?.reason.contains("not within") == true)
        // A header whose length runs past the file.
        var lying = whole
        lying.replaceSubrange(0..<8, with: withUnsafeBytes(of: UInt64(whole.count).littleEndian) { Data($0) })
        #expect(failure(try folder("lying", config: { _ in }, weights: lying))?.field == "header")
        #expect(failure(scratch.appendingPathComponent("absent").path)?.reason == "no such file or folder")
        #expect(failure(scratch.path)?.field == "format")
    }

    /// An SAE over stories260K's residual stream after block 2 (64 wide) that reconstructs every
    /// row exactly — features relu(x) and relu(−x), decoded as their difference — or, with
    /// `zero`, one whose reconstruction is 0.
    static func constructed(zero: Bool) throws -> SparseAutoencoder {
        let width = 64
        var encoder = [Float](repeating: 0, count: width * 2 * width), decoder = [Float](repeating: 0, count: 2 * width * width)
        for i in 0..<width {
            encoder[i * 2 * width + i] = 1
            encoder[i * 2 * width + width + i] = -1
            decoder[i * width + i] = zero ? 0 : 1
            decoder[(width + i) * width + i] = zero ? 0 : -1
        }
        return try SparseAutoencoder(architecture: .standard, point: .blockOutput, block: 2, subtractsDecoderBias: false,
                                     encoder: Tensor(encoder, shape: [width, 2 * width]), encoderBias: Tensor([Float](repeating: 0, count: 2 * width), shape: [2 * width]),
                                     decoder: Tensor(decoder, shape: [2 * width, width]), decoderBias: Tensor([Float](repeating: 0, count: width), shape: [width]),
                                     threshold: nil, source: "constructed")
    }

    @Test("quality: an exact SAE loses nothing, a zero one is the ablation, and the clean loss is the run's own")
    func quality() async throws {
        let model = try LanguageModel(path: try TestData.path("models/stories260K.gguf"))
        let session = ModelSession(model: model)
        let tokens = model.tokenizer.encode("Once upon a time, there was a little girl named Lily. She loved to play outside.")
        let bos = model.tokenizer.vocabulary.bos.map { Set([$0]) } ?? []
        let exact = try await session.quality(of: try Self.constructed(zero: false), tokens: tokens, excluded: bos)
        #expect(exact.positions == tokens.count - 1)
        #expect(exact.meanSquaredError == 0 && exact.explainedVariance == 1)
        #expect(exact.splicedLoss == exact.cleanLoss && exact.lossScore == 1)
        #expect(exact.ablatedLoss > exact.cleanLoss)
        // relu(x) and relu(−x): one of the pair fires for every nonzero element.
        #expect(exact.l0 > 60 && exact.l0 <= 64)
        let zero = try await session.quality(of: try Self.constructed(zero: true), tokens: tokens, excluded: bos)
        #expect(zero.splicedLoss == zero.ablatedLoss && zero.lossScore == 0 && zero.cleanLoss == exact.cleanLoss)
        #expect(zero.explainedVariance < 0)
        // The clean loss from the run's logits, position by position (BOS's own prediction left out).
        let capture = ActivationCapture([.logits])
        _ = try await session.evaluate(tokens, hooks: [capture])
        let logits = capture.take(.logits, block: 0), vocabulary = model.configuration.vocabularySize
        var total = 0.0
        for position in 1..<(tokens.count - 1) {
            let row = Array(logits[(position * vocabulary)..<((position + 1) * vocabulary)])
            let largest = Double(row.max() ?? 0)
            let logSum = largest + log(row.reduce(0.0) { $0 + exp(Double($1) - largest) })
            total += logSum - Double(row[Int(tokens[position + 1])])
        }
        #expect(abs(exact.cleanLoss - total / Double(tokens.count - 2)) < 1e-5)
        // An SAE of another width is refused before any pass.
        let other = try SparseAutoencoder.load(path: Self.folder.appendingPathComponent("saelens-standard-f32").path, hook: "blocks.2.hook_resid_post")
        await #expect(throws: ModelError.self) { try await session.quality(of: other, tokens: tokens, excluded: bos) }
    }
}

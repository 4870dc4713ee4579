import Evaluation
import Foundation
import LanguageTestSupport
import Testing
@testable import LumenLanguage
@testable import ModelBuiltins

/// Sparse autoencoders in cells, on SmolLM2 (`Tests/reference/sae/`: SAEs over its residual
/// stream, see `scripts/make_sae_references.py`; the formulas themselves are tested against NumPy
/// in `SparseAutoencoderTests`).
@Suite("SAEs in cells")
struct SAECellTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("reference/sae").path

    func results(_ code: String, _ interpreter: Interpreter) async throws -> [String] {
        let sink = RecordingSink()
        try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: sink)
        return sink.results
    }

    @Test("features() encodes the prompt's activations at the SAE's hook; a planted feature fires where llama.cpp's activations say")
    func featuresOfAPrompt() async throws {
        let acts = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: try sharedModelsDirectory() + "/../reference/inside/smollm2-acts.json"))) as? [String: Any])
        let prompt = try #require(acts["prompt"] as? String)
        let interpreter = modelInterpreter()
        _ = try await results("let m = load(\"\(try SteeringCellTests.model("SmolLM2-135M-Instruct.Q4_1.gguf"))\")", interpreter)
        let shown = try await results("""
            let s = loadSAE("\(Self.folder)/saelens-jumprelu-bf16")
            let f = features(m, s, "\(prompt)")
            let t = trace(m, "\(prompt)", keep: ["resid_post"], blocks: [s.block])
            [s.architecture, s.hook, s.dIn, s.dSAE, f.shape, f.axes, f.labels[0].count, max(abs(f - s.encode(t.resid_post[0]))), f[0..<5, 0].values.map { $0 > 0 }]
            """, interpreter)
        #expect(shown == [#"["jumprelu", "blocks.12.hook_resid_post", 576, 32, [5, 32], ["position", "feature"], 5, 0.0, [false, false, false, false, true]]"#])
        // Shown as each token's strongest features: the planted one first at the last token.
        let sink = RecordingSink()
        try await interpreter.execute(ExecutionRequest(code: "f", executionCount: 2), output: sink)
        let bundle = try #require(sink.events.compactMap { if case .result(let bundle) = $0 { bundle } else { nil } }.last)
        let html = try #require(bundle.data["text/html"])
        let strongest = try await results("let last = f[4].values\n(0..<32).filter { last[$0] > 0 }.sorted { last[$0] > last[$1] }[0]", interpreter)
        #expect(strongest == ["0"])
        #expect(html.contains("strongest features (activation)") && html.contains("<td>&quot; is&quot;</td><td>0 ("), "\(html)")
        #expect(!html.contains("background: rgba("), "not a heatmap")
        // The decoder's row, and decode of one-hot features: b_dec plus that row.
        let decoded = try await results("""
            let one = (0..<32).map { $0 == 3 ? 1.0 : 0.0 }
            max(abs(s.decode(one) - s.decode(one.map { $0 * 0 }) - s.direction(3)))
            """, interpreter)
        #expect(decoded.count == 1 && (Double(decoded[0]) ?? 1) < 1e-4)
        // SAELens' quality measures over the prompt (SmolLM2 adds no BOS: every position counts).
        let quality = try await results("""
            let q = saeQuality(m, s, "\(prompt)")
            [q.keys, q["positions"], q["ceLossScore"] == (q["ceLossAblated"] - q["ceLossSpliced"]) / (q["ceLossAblated"] - q["ceLossClean"]), q["ceLossClean"] < q["ceLossAblated"]]
            """, interpreter)
        #expect(quality == [#"[["positions", "mse", "explainedVariance", "l0", "ceLossClean", "ceLossSpliced", "ceLossAblated", "ceLossScore"], 5, true, true]"#])
        // Where the planted feature fires most: the prompt's last token, first.
        let top = try await results("topActivations(m, s, feature: 0, texts: [\"\(prompt)\"], count: 2).map { [$0[\"position\"], $0[\"token\"]] }", interpreter)
        #expect(top == [#"[[4, " is"]]"#])
    }

    @Test("setFeature moves the activations along the feature's direction by what it changes the feature, keeping the SAE's error; value 0 ablates it")
    func settingAFeature() async throws {
        let interpreter = modelInterpreter()
        _ = try await results("let m = load(\"\(try SteeringCellTests.model("SmolLM2-135M-Instruct.Q4_1.gguf"))\")", interpreter)
        let shown = try await results("""
            let s = loadSAE("\(Self.folder)/saelens-standard-f32")
            let p = "The capital of France is"
            let clean = trace(m, p, blocks: [6]).resid_post[0]
            let set = trace(m, p, blocks: [6], interventions: [setFeature(s, feature: 5, value: 40, positions: [2, 3])]).resid_post[0]
            let f = s.encode(clean)[0..<5, 5]
            let expected = clean + outer((40 - f) * [0, 0, 1, 1, 0], s.direction(5))
            let ablated = s.encode(trace(m, p, blocks: [6], interventions: [setFeature(s, feature: 5)]).resid_post[0])[0..<5, 5]
            [max(abs(set - expected)) < 1e-3 * max(abs(clean)), max(abs(set[0] - clean[0])), max(abs(ablated)) < max(abs(f))]
            """, interpreter)
        #expect(shown == ["[true, 0.0, true]"])
        let refused = await cellFailure("setFeature(s, feature: 32)", interpreter)
        #expect(refused?.contains("feature: needs one of the SAE's 32 features") == true, "\(refused ?? "no error")")
    }

    @Test("an SAE of another model's width, or of a block the model lacks, is refused naming it")
    func misfits() async throws {
        let interpreter = modelInterpreter()
        _ = try await results("let m = load(\"\(try sharedModelsDirectory())/stories260K.gguf\")", interpreter)
        let width = await cellFailure("features(m, loadSAE(\"\(Self.folder)/gemmascope/resid_post/layer_3_width_16k_l0_small\"), \"Once\")", interpreter)
        #expect(width?.contains("the SAE's d_in is 576, but the model's blocks.3.hook_resid_post is 64 wide") == true, "\(width ?? "no error")")
        let block = await cellFailure("features(m, loadSAE(\"\(Self.folder)/saelens-standard-f32\"), \"Once\")", interpreter)
        #expect(block?.contains("block 6 is not one of the model's 5 blocks") == true, "\(block ?? "no error")")
        let hook = await cellFailure("loadSAE(\"\(Self.folder)/saelens-standard-f32\", hook: \"blocks.1.hook_somewhere\")", interpreter)
        #expect(hook?.contains("blocks.1.hook_somewhere is not a hook Lumen has") == true, "\(hook ?? "no error")")
        let missing = await cellFailure("loadSAE(\"\(Self.folder)/nothing-here\")", interpreter)
        #expect(missing?.contains("no such file or folder") == true, "\(missing ?? "no error")")
    }
}

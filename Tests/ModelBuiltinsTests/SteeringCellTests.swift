import Evaluation
import Foundation
import LanguageTestSupport
import Testing
@testable import LumenLanguage
@testable import ModelBuiltins

/// Control vectors in cells against llama.cpp's (`reference/inside/`): `steeringVector` builds
/// llama.cpp's contrastive vector, and `generate(…, steer:)` gives llama.cpp's steered greedy tokens.
@Suite("Steering in cells")
struct SteeringCellTests {
    static func model(_ file: String) throws -> String {
        let cache = ProcessInfo.processInfo.environment["LUMEN_MODEL_CACHE"] ?? FileManager.default.homeDirectoryForCurrentUser.path + "/.cache/lumen/models"
        try #require(FileManager.default.fileExists(atPath: cache + "/" + file), "run make models to fetch \(file)")
        return cache + "/" + file
    }

    static func reference(_ name: String) throws -> (json: [String: Any], vector: String) {
        let inside = try sharedModelsDirectory() + "/../reference/inside/"
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: inside + name + ".json"))) as? [String: Any])
        return (json, inside + name + ".cvec.gguf")
    }

    func results(_ code: String, _ interpreter: Interpreter) async throws -> [String] {
        let sink = RecordingSink()
        try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: sink)
        return sink.results
    }

    @Test("steeringVector from llama.cpp's prompt pair has its vector's blocks and norms (within 2 %)")
    func steeringVector() async throws {
        let (json, file) = try Self.reference("smollm2-steer")
        let interpreter = modelInterpreter()
        let positive = try #require(json["positive"] as? String), negative = try #require(json["negative"] as? String)
        _ = try await results("let m = load(\"\(try Self.model("SmolLM2-135M-Instruct.Q4_1.gguf"))\")", interpreter)
        let shown = try await results("""
            let v = steeringVector(m, positive: ["\(positive)"], negative: ["\(negative)"])
            let w = controlVector("\(file)")
            [v.blocks == w.blocks, v.width == w.width, range(v.norms.count).filter { abs(v.norms[$0] / w.norms[$0] - 1) >= 0.02 }]
            """, interpreter)
        #expect(shown == ["[true, true, []]"])
    }

    @Test("generate with steer:, steerScale: and steerBlocks: gives llama.cpp's steered greedy tokens")
    func steeredGeneration() async throws {
        let (json, file) = try Self.reference("gemma3-steer")
        let interpreter = modelInterpreter()
        let target = try #require(json["target"] as? String)
        let (scale, first, last) = (try #require(json["scale"] as? Double), try #require(json["il_start"] as? Int), try #require(json["il_end"] as? Int))
        _ = try await results("let m = load(\"\(try Self.model("gemma-3-270m-q4_k_m.gguf"))\")\nlet v = controlVector(\"\(file)\")", interpreter)
        let steered = try await results("m.generate(\"\(target)\", maxTokens: 3, temperature: 0, steer: v, steerScale: \(scale), steerBlocks: \(first)...\(last)).tokens.map { $0[\"id\"] }", interpreter)
        let plain = try await results("m.generate(\"\(target)\", maxTokens: 3, temperature: 0).tokens.map { $0[\"id\"] }", interpreter)
        let expected = try #require(json["greedy_steered"] as? [Int])
        #expect(steered == ["\(Array(expected.prefix(3)))"])
        #expect(plain != steered)
    }

    @Test("logitLens shows llama.cpp's greedy token at the last block's last position, and follows a token across blocks")
    func logitLens() async throws {
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: try sharedModelsDirectory() + "/../reference/inside/smollm2-acts.json"))) as? [String: Any])
        let prompt = try #require(root["prompt"] as? String), greedy = try #require((root["greedy"] as? [Int])?.first)
        let interpreter = modelInterpreter()
        _ = try await results("let m = load(\"\(try Self.model("SmolLM2-135M-Instruct.Q4_1.gguf"))\")", interpreter)
        let shown = try await results("""
            let l = logitLens(m, "\(prompt)", token: " Paris")
            [l.top.count, l.tokens.count, l.ids[29][4], l.followed.count, l.followed.filter { $0 < 0 || $0 > 1 }.count, l.followed[29] == l.probabilities[29][4]]
            """, interpreter)
        #expect(shown == ["[30, 5, \(greedy), 30, 0, true]"])
        let sink = RecordingSink()
        try await interpreter.execute(ExecutionRequest(code: "l", executionCount: 2), output: sink)
        let bundle = try #require(sink.events.compactMap { if case .result(let bundle) = $0 { bundle } else { nil } }.last)
        let text = try #require(bundle.data["text/plain"]), html = try #require(bundle.data["text/html"])
        #expect(text.hasPrefix("block  ") && text.contains("\n29 ") && html.contains("<svg") && html.contains("background: rgba("))
        await #expect {
            try await interpreter.execute(ExecutionRequest(code: "logitLens(m, \"x\", token: \" Parisian capital\")", executionCount: 3), output: RecordingSink())
        } throws: { error in
            (error as? ExecutionError)?.message.contains("token: \" Parisian capital\" is 3 tokens, not one") == true
        }
    }

    @Test("attentionPatterns gives each head's weights as llama.cpp's kq_soft_max has them, and refuses a block or heads the model lacks")
    func attentionPatterns() async throws {
        let inside = try sharedModelsDirectory() + "/../reference/inside/"
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: inside + "smollm2-acts.json"))) as? [String: Any])
        let prompt = try #require(root["prompt"] as? String), tokens = try #require(root["tokens"] as? [Int]).count
        let heads = try #require(root["n_head"] as? Int), block = 3
        let expected = try Data(contentsOf: URL(fileURLWithPath: inside + "smollm2-acts.attn.bin")).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let interpreter = modelInterpreter()
        _ = try await results("let m = load(\"\(try Self.model("SmolLM2-135M-Instruct.Q4_1.gguf"))\")", interpreter)
        let shown = try await results("let a = attentionPatterns(m, \"\(prompt)\", block: \(block))\n[a.heads.count, a.tokens.count, a.weights]", interpreter)
        let values = try #require(shown.first?.dropFirst().dropLast().split(separator: ",", maxSplits: 2))
        #expect(values.count == 3 && Int(values[0].trimmingCharacters(in: .whitespaces)) == heads && Int(values[1].trimmingCharacters(in: .whitespaces)) == tokens)
        // The weights, read back from the value: [head][query][key ≤ query].
        let weights = try await results("a.weights.map { $0.map { $0.map { \"\\($0)\" }.joined(separator: \",\") }.joined(separator: \";\") }.joined(separator: \"|\")", interpreter)
        let parsed = try #require(weights.first).trimmingCharacters(in: CharacterSet(charactersIn: "\"")).split(separator: "|").map { $0.split(separator: ";").map { $0.split(separator: ",").compactMap { Float($0) } } }
        #expect(parsed.count == heads)
        var largest: Float = 0, total: Float = 0, count = 0
        for head in 0..<heads {
            for query in 0..<tokens {
                #expect(parsed[head][query].count == query + 1)
                for key in 0...query {
                    let difference = abs(parsed[head][query][key] - expected[((block * heads + head) * tokens + query) * tokens + key])
                    (largest, total, count) = (max(largest, difference), total + difference, count + 1)
                }
            }
        }
        // The tolerance of the attention hook's own test against the same file (8-bit activations).
        #expect(largest <= 0.1 && total / Float(count) <= 0.005, "largest \(largest), mean \(total / Float(count))")
        for (code, message) in [("attentionPatterns(m, \"x\", block: 30)", "attention: block 30 is not one of the model's 30 blocks (0…29)"),
                                ("attentionPatterns(m, \"x\", block: 1, heads: 0..<10)", "heads: needs a range of the model's 9 heads such as 0..<2, got 0..<10")] {
            await #expect("\(code)") {
                try await interpreter.execute(ExecutionRequest(code: code, executionCount: 3), output: RecordingSink())
            } throws: { error in
                (error as? ExecutionError)?.message.contains(message) == true
            }
        }
    }

    @Test("steer: needs a control vector that fits the model, steerBlocks: a range of its blocks and steer:; steeringVector a known method and, for mean and pca, pairs")
    func steeringArguments() async throws {
        let interpreter = modelInterpreter()
        let models = try sharedModelsDirectory()
        _ = try await results("let m = load(\"\(models)/stories260K.gguf\")", interpreter)
        _ = try await results("let v = steeringVector(m, positive: [\"happy\"], negative: [\"sad\"])", interpreter)
        _ = try await results("let wide = controlVector(\"\(try Self.reference("smollm2-steer").vector)\")", interpreter)
        for (code, message) in [("m.generate(\"x\", steer: 3)", "steer: needs a ControlVector (from controlVector or steeringVector) or a Tensor, got Int"),
                                ("m.generate(\"x\", steerBlocks: 1...2)", "steerBlocks: needs steer: (a control vector)"),
                                ("m.generate(\"x\", steer: tensor([1, 2]))", "steer: with a Tensor needs steerBlocks: (the blocks to add it after)"),
                                ("m.generate(\"x\", steer: tensor([[1, 2]]), steerBlocks: 1...2)", "steer: needs a Tensor of one axis (a direction of the residual stream's width), got [1 × 2]"),
                                ("m.generate(\"x\", steer: tensor([1, 2]), steerBlocks: 1...2)", "the control vector has 2 values per block, but the model's residual stream has 64"),
                                ("steeringVector(m, positive: [], negative: [\"b\"])", "positive: needs a non-empty array of Strings, got Array"),
                                ("steeringVector(m, positive: [\"a\"], negative: [\"b\"], method: \"median\")", "method: must be one of \"last\", \"mean\", \"pca\", got \"median\""),
                                ("steeringVector(m, positive: [\"a\", \"b\"], negative: [\"c\"], method: \"mean\")",
                                 "method: \"mean\" pairs positive i with negative i: give as many of each, not 2 and 1"),
                                ("normalize(3)", "normalize: needs a ControlVector, got Int"),
                                // Checked when the run starts, for every way in: nothing runs silently unsteered.
                                ("m.generate(\"x\", steer: wide)", "steering: the control vector has 576 values per block, but the model's residual stream has 64"),
                                ("m.generate(\"x\", steer: v, steerBlocks: 3...9)", "steering: blocks 3…9 are not all in the model's 5 blocks (0…4)")] {
            await #expect("\(code)") {
                try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: RecordingSink())
            } throws: { error in
                (error as? ExecutionError)?.message.contains(message) == true
            }
        }
    }
}

import Foundation
import Testing
@testable import Inference

/// One generation case of a llama.cpp reference file.
struct ReferenceCase {
    let promptIDs: [Int32]
    let greedyIDs: [Int32]
    let greedyText: String
    let logits: [[Float]]
    let topMargins: [Double]
    let f64Logits: [[Float]]?
    let f64GreedyIDs: [Int32]?

    static func load(_ model: String) throws -> [ReferenceCase] {
        let root = try #require(try TestData.json(model + ".json") as? [String: Any])
        let cases = try #require(root["cases"] as? [[String: Any]])
        return cases.map { entry in
            let f64 = entry["f64_dequant_reference"] as? [String: Any]
            return ReferenceCase(
                promptIDs: (entry["prompt_ids"] as? [Int] ?? []).map(Int32.init),
                greedyIDs: (entry["greedy_ids"] as? [Int] ?? []).map(Int32.init),
                greedyText: entry["greedy_text"] as? String ?? "",
                logits: (entry["logits"] as? [[Double]] ?? []).map { $0.map(Float.init) },
                topMargins: entry["top2_margin"] as? [Double] ?? [],
                f64Logits: (f64?["logits_teacher_forced"] as? [[Double]])?.map { $0.map(Float.init) },
                f64GreedyIDs: (f64?["greedy_ids"] as? [Int])?.map(Int32.init)
            )
        }
    }
}

/// Teacher-forced logits: after the prompt, then after each of the first `steps - 1` greedy ids.
/// `adapters`, when given, are applied to every pass.
func teacherForcedLogits(_ model: LanguageModel, _ reference: ReferenceCase, steps: Int, threads: Int = 1,
                         activations: ActivationPrecision = .float32, adapters: AdapterSet = .none, cacheType: KVCacheType = .f32) throws -> [[Float]] {
    let state = InferenceState(model: model, contextLength: 512, batchCapacity: 64, threads: threads, activations: activations, cacheType: cacheType)
    state.useAdapters(adapters)
    let vocabulary = model.configuration.vocabularySize
    var result: [[Float]] = []
    try model.forward(reference.promptIDs, state: state)
    result.append(Array(UnsafeBufferPointer(start: state.logits, count: vocabulary)))
    for id in reference.greedyIDs.prefix(steps - 1) {
        try model.forward([id], state: state)
        result.append(Array(UnsafeBufferPointer(start: state.logits, count: vocabulary)))
    }
    return result
}

func maxAbsDifference(_ left: [Float], _ right: [Float]) -> Float {
    zip(left, right).map { abs($0 - $1) }.max() ?? .infinity
}

@Suite("Forward pass against llama.cpp")
struct ReferenceTests {
    @Test("stories260K and quant-test-f32: logits within 1e-3", arguments: ["stories260K", "quant-test-f32"])
    func f32Logits(model name: String) throws {
        let model = try LanguageModel(path: try TestData.path("models/\(name).gguf"))
        for reference in try ReferenceCase.load(name) {
            let logits = try teacherForcedLogits(model, reference, steps: reference.logits.count)
            for (step, expected) in reference.logits.enumerated() {
                #expect(maxAbsDifference(logits[step], expected) < 1e-3, "step \(step)")
            }
        }
    }
}


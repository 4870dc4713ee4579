import Foundation
import Testing
@testable import Inference

@Suite("Quantized formats against the reference")
struct QuantizedFormatTests {
    static let formats = ["quant-test-f16", "quant-test-q8_0", "quant-test-q4_0", "quant-test-q4_k", "quant-test-q6_k", "quant-test-q4_k_m"]

    @Test("tight check: within 2e-3 of the f64 dequantized reference, and its greedy ids", arguments: formats)
    func tight(model name: String) async throws {
        let model = try LanguageModel(path: try TestData.path("models/\(name).gguf"))
        let reference = try #require(try ReferenceCase.load(name).first)
        let expected = try #require(reference.f64Logits)
        let logits = try teacherForcedLogits(model, reference, steps: expected.count)
        for (step, row) in expected.enumerated() {
            #expect(maxAbsDifference(logits[step], row) < 2e-3, "step \(step)")
        }
        let f64Greedy = try #require(reference.f64GreedyIDs)
        let (ids, _, _) = try await collect(ModelSession(model: model, threads: 2, activations: .float32).generate("Once upon a time", options: greedy(f64Greedy.count)))
        #expect(ids == f64Greedy)
    }

    @Test("fast path (8-bit activations) against llama.cpp's own logits: max ≤ 2.5, rms ≤ 0.6, cosine ≥ 0.995, confident argmaxes agree", arguments: formats)
    func loose(model name: String) throws {
        let model = try LanguageModel(path: try TestData.path("models/\(name).gguf"))
        let reference = try #require(try ReferenceCase.load(name).first)
        let logits = try teacherForcedLogits(model, reference, steps: reference.logits.count, activations: .quantized)
        for (step, expected) in reference.logits.enumerated() {
            let ours = logits[step]
            let differences = zip(ours, expected).map { Double($0 - $1) }
            let rms = (differences.map { $0 * $0 }.reduce(0, +) / Double(differences.count)).squareRoot()
            let dot = zip(ours, expected).map { Double($0) * Double($1) }.reduce(0, +)
            let cosine = dot / (Double(Kernels.norm(ours)) * Double(Kernels.norm(expected)))
            #expect(maxAbsDifference(ours, expected) <= 2.5 && rms <= 0.6 && cosine >= 0.995, "step \(step): rms \(rms), cosine \(cosine)")
        }
        let forced = try teacherForcedLogits(model, reference, steps: reference.greedyIDs.count, activations: .quantized)
        for (step, margin) in reference.topMargins.enumerated() where margin > 3 {
            #expect(Sampler.argmax(forced[step]) == reference.greedyIDs[step], "step \(step)")
        }
    }
}

extension Kernels {
    static func norm(_ values: [Float]) -> Float {
        values.map { $0 * $0 }.reduce(0, +).squareRoot()
    }
}

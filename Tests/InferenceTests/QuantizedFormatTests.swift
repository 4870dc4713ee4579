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

    /// Both engines quantize activations to 8 bits on this path, each with its own rounding, so
    /// their logits differ by two noises; the fair measure is each one's distance from the exact
    /// (f64, dequantized weights) logits.
    @Test("fast path (8-bit activations): at least as close to the exact logits as llama.cpp's own (within 10 %), cosine ≥ 0.995 with them, confident argmaxes as llama.cpp's", arguments: formats)
    func loose(model name: String) throws {
        let model = try LanguageModel(path: try TestData.path("models/\(name).gguf"))
        let reference = try #require(try ReferenceCase.load(name).first)
        let exact = try #require(reference.f64Logits)
        let logits = try teacherForcedLogits(model, reference, steps: exact.count, activations: .quantized)
        var ours = 0.0, theirs = 0.0, count = 0.0
        for (step, row) in exact.enumerated() {
            ours += zip(logits[step], row).map { Double($0 - $1) * Double($0 - $1) }.reduce(0, +)
            theirs += zip(reference.logits[step], row).map { Double($0 - $1) * Double($0 - $1) }.reduce(0, +)
            count += Double(row.count)
            let dot = zip(logits[step], row).map { Double($0) * Double($1) }.reduce(0, +)
            let cosine = dot / (Double(Kernels.norm(logits[step])) * Double(Kernels.norm(row)))
            #expect(cosine >= 0.995, "step \(step): cosine \(cosine)")
        }
        let (oursRMS, theirsRMS) = ((ours / count).squareRoot(), (theirs / count).squareRoot())
        #expect(oursRMS <= 1.1 * theirsRMS, "rms from the exact logits: Lumen \(oursRMS), llama.cpp \(theirsRMS)")
        let forced = try teacherForcedLogits(model, reference, steps: reference.greedyIDs.count, activations: .quantized)
        for (step, margin) in reference.topMargins.enumerated() where margin > 3 {
            #expect(GreedySampler.argmax(forced[step]) == reference.greedyIDs[step], "step \(step)")
        }
    }
}

extension Kernels {
    static func norm(_ values: [Float]) -> Float {
        values.map { $0 * $0 }.reduce(0, +).squareRoot()
    }
}

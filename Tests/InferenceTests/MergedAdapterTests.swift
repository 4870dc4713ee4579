import Foundation
import GGUF
import Testing
@testable import Inference
@testable import Quantization

/// Adapters merged into a model's weights (`lumen export-lora`, `ModelQuantizer` with adapters)
/// against llama.cpp applying the same adapters at run time (`Tests/reference/lora/`): the merged
/// model, loaded with no adapter, gives llama.cpp's logits within the bounds the adapters
/// themselves meet. Its tensors against llama-export-lora's are compared in
/// Tests/integration/test_lora.py.
@Suite("Merged LoRA adapters")
struct MergedAdapterTests {
    /// The cases whose models' adapted weights are F32 or F16, which a merge changes by rounding
    /// alone: the synthetic models and llama.cpp's random-weight ones (whose attention weights have
    /// scales that multiply their products alone). (A merge into a quantized model is
    /// quantized again, which moves its logits by that format's own error.)
    static let cases = LoRAAdapterTests.cases.filter { name in
        let root = try? JSONSerialization.jsonObject(with: Data(contentsOf: LoRAAdapterTests.references.appendingPathComponent("\(name).json"))) as? [String: Any]
        return root?["source"] as? String != "real" && name != quantizedExperts
    }

    /// The case whose adapted experts are quantized (gpt-oss's MXFP4): their merge is quantized again.
    static let quantizedExperts = "gptoss-experts"

    @Test("a model merged with adapters gives llama.cpp's logits with the adapters applied at run time", arguments: cases)
    func mergedFidelity(name: String) throws {
        let reference = try LoRAAdapterTests.reference(name)
        let gguf = reference.model.gguf
        let adapted = Set(reference.adapters.entries.flatMap(\.adapter.adaptedTensors))
        let scratch = try ScratchDirectory()
        let output = scratch.path + "/" + URL(fileURLWithPath: gguf.path).lastPathComponent
        #expect(adapted.allSatisfy { [.f32, .f16].contains(gguf.tensorsByName[$0]?.type) }, "\(gguf.path) adapts quantized weights: their merge is quantized again")
        _ = try ModelQuantizer(scheme: nil, adapters: reference.adapters, threads: 2).quantize(gguf, to: output)
        let merged = try LanguageModel(path: output)
        // Only the adapted weights changed; metadata and the others are the base's, byte for byte.
        #expect(merged.gguf.metadataRecords.count == gguf.metadataRecords.count)
        for tensor in gguf.tensors {
            let copy = try #require(merged.gguf.tensorsByName[tensor.name])
            let same = Data(gguf.data(of: tensor)) == Data(merged.gguf.data(of: copy))
            #expect(copy.type == tensor.type && copy.shape == tensor.shape && same != adapted.contains(tensor.name), "\(tensor.name)")
        }
        try RealModelTests.checkFidelity(merged, reference: reference.root, logitsDirectory: LoRAAdapterTests.references.path, activations: .quantized,
                                         minimumMargin: reference.source == "arch" ? 0.001 : 0.1,
                                         maximumDifference: LoRAAdapterTests.exactBound(reference))
    }
}

import ChatTemplates
import Foundation
import GGUF
import Inference

/// A model's description, as `lumen info` and `lumen bench` show it.
struct ModelInfo {
    let model: LanguageModel

    /// Bytes of the model file.
    var fileSize: Int { model.gguf.mapping.bytes.count }

    /// The tensor types with how many tensors and bytes each has, largest first.
    var tensorTypes: [(type: TensorType, count: Int, bytes: Int)] { Self.tensorTypes(model.gguf) }

    /// A description of a file Lumen cannot run: what it is, and why not.
    static func describe(_ gguf: GGUFFile, failure: ModelError) -> [(String, String)] {
        let architecture = gguf.metadata["general.architecture"]?.stringValue ?? "-"
        let prefix = architecture + "."
        let shape = gguf.metadata.keys.filter { $0.hasPrefix(prefix) }.sorted().map { key in
            (String(key.dropFirst(prefix.count)), gguf.metadata[key]?.displayText ?? "")
        }
        return [
            ("file", gguf.path),
            ("architecture", architecture),
            ("name", gguf.metadata["general.name"]?.stringValue ?? "-"),
            ("tensors", String(gguf.tensors.count + gguf.unknownTensors.count)),
            ("tensor types", (tensorTypes(gguf).map { "\($0.type) ×\($0.count) (\(bytes($0.bytes)))" } + unknownTypes(gguf)).joined(separator: ", ")),
            ("tokenizer", gguf.metadata["tokenizer.ggml.model"]?.stringValue ?? "-"),
            ("chat template", gguf.metadata["tokenizer.chat_template"] == nil ? "no" : "yes"),
        ] + shape + [
            ("types Lumen cannot compute", (tensorTypes(gguf).filter { !$0.type.isSupported }.map { "\($0.type) ×\($0.count)" } + unknownTypes(gguf)).joined(separator: ", ")),
            ("runs in Lumen", "no: \(failure.field): \(failure.reason)"),
        ].filter { !$0.1.isEmpty }
    }

    /// The tensor types of `gguf` with how many tensors and bytes each has, largest first.
    static func tensorTypes(_ gguf: GGUFFile) -> [(type: TensorType, count: Int, bytes: Int)] {
        var totals: [TensorType: (Int, Int)] = [:]
        for tensor in gguf.tensors {
            let (count, bytes) = totals[tensor.type] ?? (0, 0)
            totals[tensor.type] = (count + 1, bytes + tensor.byteCount)
        }
        return totals.map { ($0.key, $0.value.0, $0.value.1) }.sorted { $0.bytes > $1.bytes }
    }

    /// The type ids of `gguf` Lumen does not know, with how many tensors each has.
    static func unknownTypes(_ gguf: GGUFFile) -> [String] {
        Dictionary(grouping: gguf.unknownTensors, by: \.typeID).sorted { $0.key < $1.key }.map { "type \($0.key) ×\($0.value.count) (unknown to Lumen)" }
    }

    /// Lines of `name: value`.
    var lines: [(String, String)] {
        let configuration = model.configuration
        return [
            ("file", model.gguf.path),
            ("architecture", configuration.architecture),
            ("name", model.gguf.metadata["general.name"]?.stringValue ?? "-"),
            ("parameters", "\(model.parameterCount) (\(Self.count(model.parameterCount)))"),
            ("file size", Self.bytes(fileSize)),
            ("tensor types", tensorTypes.map { "\($0.type) ×\($0.count) (\(Self.bytes($0.bytes)))" }.joined(separator: ", ")),
            ("context length", String(configuration.contextLength)),
            ("vocabulary", "\(configuration.vocabularySize) tokens (\(model.tokenizer.vocabulary.kindDescription))"),
            ("chat template", model.gguf.metadata["tokenizer.chat_template"] != nil ? "yes"
                : "no (the built-in \(BuiltinChatTemplate.chosen(for: model.gguf, vocabulary: model.tokenizer.vocabulary).name) format is used)"),
            ("embedding", String(configuration.embeddingLength)),
            ("layers", String(configuration.blockCount)),
            ("heads", heads),
            ("feed-forward", feedForward),
            ("rope", "base \(configuration.ropeFrequencyBase), \(configuration.ropeDimensionCount) dimensions" + slidingRoPE
                + (configuration.ropeScaling.summary.map { ", \($0)" } ?? "")),
            ("rms epsilon", String(configuration.rmsEpsilon)),
        ] + slidingWindow + recurrence + sharedKeysAndValues + model.architectureDetails.map { ($0.name, $0.value) }
    }

    /// The attention heads, and how layers' differ when they do.
    private var heads: String {
        let c = model.configuration
        let kv = Self.eachLayer(c.layerShapes.map(\.headCountKV), else: c.headCountKV)
        let sliding = c.headWidthsDiffer ? " (sliding layers' \(c.slidingLayerShape?.headDimension ?? 0))" : ""
        return "\(c.headCount) query, \(kv) key/value, \(c.headDimension) wide" + sliding
    }

    /// The last layers that attend over earlier layers' keys and values (Gemma 4's), when the model has them.
    private var sharedKeysAndValues: [(String, String)] {
        let c = model.configuration
        let sharing = (0..<c.blockCount).filter { c.cacheLayer($0) != $0 }
        guard let first = sharing.first, let last = sharing.last else { return [] }
        let sources = Set(sharing.map(c.cacheLayer)).sorted().map(String.init).joined(separator: " and ")
        return [("shared keys/values", "layers \(first)–\(last) attend over layers \(sources)'")]
    }

    /// The feed-forward's width, or its experts' (after the leading dense layers, if any).
    private var feedForward: String {
        let c = model.configuration
        let dense = Self.eachLayer(c.layerShapes.map(\.feedForwardLength), else: c.feedForwardLength)
        guard let experts = c.experts else { return dense }
        let routed = "\(experts.count) experts of \(experts.feedForwardLength), \(experts.used) per token"
        if experts.besideDense { return "\(dense) beside \(routed)" }
        switch c.leadingDenseLayers {
        case 0: return routed
        case 1: return "\(c.feedForwardLength) in layer 0, then \(routed)"
        case let dense: return "\(c.feedForwardLength) in layers 0–\(dense - 1), then \(routed)"
        }
    }

    /// The sliding-window layers, when the model has them.
    private var slidingWindow: [(String, String)] {
        let configuration = model.configuration
        let layers = (0..<configuration.blockCount).filter { configuration.slides(layer: $0) }.count
        guard let window = configuration.slidingWindow, layers > 0 else { return [] }
        return [("sliding window", "\(window) positions in \(layers) of \(configuration.blockCount) layers")]
    }

    /// The recurrent layers of a hybrid model, when it has them.
    private var recurrence: [(String, String)] {
        let configuration = model.configuration
        guard let r = configuration.recurrence else { return [] }
        let layers = (0..<configuration.blockCount).filter { configuration.isRecurrent(layer: $0) }.count
        let heads = r.deltaRule.map { ", \($0.keyHeads) key and \($0.valueHeads) value heads of \($0.valueHeadDimension)" } ?? ""
        return [("recurrent", "\(layers) of \(configuration.blockCount) layers (\(r.kind)\(heads), a convolution over \(r.convolutionWidth) inputs)")]
    }

    /// The sliding layers' RoPE, when it differs.
    private var slidingRoPE: String {
        let c = model.configuration
        let base = c.slidingRopeFrequencyBase ?? c.ropeFrequencyBase, dimensions = c.slidingLayerShape?.ropeDimensionCount ?? c.ropeDimensionCount
        guard base != c.ropeFrequencyBase || dimensions != c.ropeDimensionCount else { return "" }
        return " (sliding layers: base \(base), \(dimensions) dimensions)"
    }

    /// Each layer's value, `/`-separated, when layers differ; else the model's.
    private static func eachLayer(_ values: [Int], else model: Int) -> String {
        Set(values).count > 1 ? values.map(String.init).joined(separator: "/") : String(model)
    }

    /// `n` with a K/M/B suffix.
    static func count(_ n: Int) -> String {
        switch n {
        case 1_000_000_000...: String(format: "%.2f B", Double(n) / 1e9)
        case 1_000_000...: String(format: "%.2f M", Double(n) / 1e6)
        case 1_000...: String(format: "%.2f K", Double(n) / 1e3)
        default: String(n)
        }
    }

    /// `n` bytes in MiB or GiB.
    static func bytes(_ n: Int) -> String {
        n >= 1 << 30 ? String(format: "%.2f GiB", Double(n) / Double(1 << 30)) : String(format: "%.2f MiB", Double(n) / Double(1 << 20))
    }
}

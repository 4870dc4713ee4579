import CPUBackend
import GGUF

/// A LoRA adapter as llama.cpp reads it (`convert_lora_to_gguf.py` writes it, `--lora` loads it):
/// a GGUF of `general.type` `adapter` and `adapter.type` `lora` holding, for each weight it adapts,
/// the low-rank pair `<weight>.lora_a` and `<weight>.lora_b`, and its `adapter.lora.alpha`. It is
/// applied without merging (`AdapterSet`): each adapted projection adds
/// `scale × alpha / rank × B(A x)` to its product, as llama.cpp's `build_lora_mm` does, so the
/// base weights stay shared and several adapters can be active at once, each with its scale.
/// Immutable; its tensors are views into the mapped file.
public final class LoRAAdapter: Sendable {
    /// One adapted weight's low-rank pair. For a matrix of `rows` × `columns`, `a` is `rank` rows of
    /// `columns` and `b` is `rows` rows of `rank`; for the token embedding, llama.cpp's flipped
    /// layout: `a` holds a row of `rank` per token, looked up like the embedding, and `b` the
    /// embedding's width in rows of `rank`.
    ///
    /// For experts' stacked weights (llama.cpp's `build_lora_mm_id`), a pair per expert stacked
    /// the same way: `a` is `experts` × `rank` rows, `b` `experts` × `rows` rows, expert `e`'s
    /// the `e`-th run of each (`a(expert:)`, and its rows of `b`).
    struct Pair: Sendable {
        let a: Matrix
        let b: Matrix
        /// How many experts' pairs it stacks (1 for a two-dimensional weight).
        let experts: Int
        /// The adapter's rank for this weight (`lora_b`'s first dimension, as llama.cpp reads it).
        var rank: Int { b.columns }

        /// Expert `expert`'s A (A itself for a two-dimensional weight).
        func a(expert: Int) -> Matrix {
            experts == 1 ? a : a.rows((expert * rank)..<((expert + 1) * rank))
        }
    }

    /// The file it was read from.
    public let path: String
    /// `general.architecture`: the base model's architecture.
    public let architecture: String
    /// `adapter.lora.alpha`; 0 (the key absent) leaves each scale as it is, as in llama.cpp.
    public let alpha: Float
    /// The low-rank pair of each adapted weight, by the weight's tensor name.
    let pairs: [String: Pair]
    /// Tensors llama.cpp skips as well: norm weights (`*_norm.weight`), which it does not apply yet.
    public let skippedTensors: [String]

    /// Reads the adapter GGUF at `path`, checking its type, its pairs and their shapes.
    ///
    /// - Throws: `ModelError` naming the file and the key or tensor that is wrong.
    public init(contentsOf path: String) throws(ModelError) {
        let gguf = try GGUFFile(path: path)
        func text(_ key: String) -> String? { gguf.metadata[key]?.stringValue }
        guard text("general.type") == "adapter" else {
            throw ModelError(file: path, field: "general.type", reason: "is \(text("general.type").map { "\"\($0)\"" } ?? "missing"), not \"adapter\": not a LoRA adapter")
        }
        guard text("adapter.type") == "lora" else {
            throw ModelError(file: path, field: "adapter.type", reason: "is \(text("adapter.type").map { "\"\($0)\"" } ?? "missing"), not \"lora\"")
        }
        guard gguf.metadata["adapter.alora.invocation_tokens"] == nil else {
            throw ModelError(file: path, field: "adapter.alora.invocation_tokens", reason: "marks an activated LoRA (aLoRA), which Lumen does not apply")
        }
        guard let architecture = text("general.architecture") else {
            throw ModelError(file: path, field: "general.architecture", reason: "is missing: an adapter names its base model's architecture")
        }
        let alpha = gguf.metadata["adapter.lora.alpha"]?.doubleValue ?? 0
        guard alpha.isFinite else { throw ModelError(file: path, field: "adapter.lora.alpha", reason: "is \(alpha), not a finite number") }
        try gguf.requireKnownTypes()
        var halves: [String: (a: GGUFFile.Tensor?, b: GGUFFile.Tensor?)] = [:]
        var skipped: [String] = []
        for tensor in gguf.tensors {
            if tensor.name.hasSuffix(".lora_a") {
                halves[String(tensor.name.dropLast(".lora_a".count)), default: (nil, nil)].a = tensor
            } else if tensor.name.hasSuffix(".lora_b") {
                halves[String(tensor.name.dropLast(".lora_b".count)), default: (nil, nil)].b = tensor
            } else if tensor.name.hasSuffix("_norm.weight") {
                skipped.append(tensor.name)
            } else {
                throw ModelError(file: path, field: "tensor \(tensor.name)", reason: "is neither a .lora_a nor a .lora_b tensor")
            }
        }
        var pairs: [String: Pair] = [:]
        for (weight, half) in halves {
            guard let a = half.a, let b = half.b else {
                throw ModelError(file: path, field: "tensor \(weight).\(half.a == nil ? "lora_a" : "lora_b")", reason: "is missing: \(weight) has only one half of its pair")
            }
            let embedding = weight == TensorName.tokenEmbedding.weight()
            // Two dimensions, or three for experts' stacked weights (as many experts in each).
            guard a.shape.count == b.shape.count, a.shape.count == 2 || (a.shape.count == 3 && !embedding && a.shape[2] == b.shape[2]) else {
                throw ModelError(file: path, field: "tensor \(weight).lora_a",
                                 reason: "has shape \(a.shape), lora_b \(b.shape): a pair is two matrices, or two stacks of one per expert")
            }
            // A's rows and B's columns are the rank (for the embedding, A is looked up by token).
            guard (embedding ? a.shape[0] : a.shape[1]) == b.shape[0] else {
                throw ModelError(file: path, field: "tensor \(weight).lora_a", reason: "has shape \(a.shape), lora_b \(b.shape): their ranks differ")
            }
            pairs[weight] = Pair(a: try Matrix(a, in: gguf, interleaving: !embedding), b: try Matrix(b, in: gguf, interleaving: true),
                                 experts: a.shape.count == 3 ? a.shape[2] : 1)
        }
        guard !pairs.isEmpty else { throw ModelError(file: path, field: "tensors", reason: "there are no .lora_a/.lora_b pairs: the adapter adapts nothing") }
        self.path = path
        self.architecture = architecture
        self.alpha = Float(alpha)
        self.pairs = pairs
        skippedTensors = skipped.sorted()
    }

    /// The names of the weights it adapts, sorted.
    public var adaptedTensors: [String] { pairs.keys.sorted() }

    /// Its ranks, smallest first (one, unless its weights were adapted with different ranks).
    public var ranks: [Int] { Set(pairs.values.map(\.rank)).sorted() }

    /// Bytes of its low-rank matrices.
    public var byteCount: Int { pairs.values.reduce(0) { $0 + $1.a.byteCount + $1.b.byteCount } }

    /// The factor one of its products is multiplied by at `scale`: `scale × alpha / rank`, or
    /// `scale` when alpha is 0 — in llama.cpp's order of float operations.
    func factor(_ scale: Float, rank: Int) -> Float {
        alpha != 0 ? scale * alpha / Float(rank) : scale
    }

    /// Checks that this adapter fits `model` as llama.cpp checks it (the same architecture, every
    /// adapted weight in the model with the shape its pair implies), and that Lumen applies each
    /// weight where llama.cpp does.
    ///
    /// - Throws: `ModelError` naming the adapter's file and the tensor that does not fit.
    func check(against model: LanguageModel) throws(ModelError) {
        guard architecture == model.configuration.architecture else {
            throw ModelError(file: path, field: "general.architecture",
                             reason: "is \"\(architecture)\", the model's (\(model.gguf.path)) \"\(model.configuration.architecture)\": an adapter is made for one base model")
        }
        for (weight, pair) in pairs.sorted(by: { $0.key < $1.key }) {
            guard let base = model.gguf.tensorsByName[weight] else {
                throw ModelError(file: path, field: "tensor \(weight).lora_a", reason: "adapts \(weight), which the model (\(model.gguf.path)) does not have: an adapter for another model?")
            }
            let embedding = weight == TensorName.tokenEmbedding.weight()
            // A matrix of `rows` × `columns` is [columns, rows] in GGUF; A is [columns, rank] and B
            // [rank, rows]; experts' are [columns, rank, experts] and [rank, rows, experts].
            let expected = embedding ? [pair.b.rows, pair.a.rows]
                : pair.experts == 1 ? [pair.a.columns, pair.b.rows] : [pair.a.columns, pair.b.rows / pair.experts, pair.experts]
            guard base.shape == expected else {
                throw ModelError(file: path, field: "tensor \(weight).lora_a",
                                 reason: "fits a weight of shape \(expected), the model's \(weight) has \(base.shape): an adapter for another model?")
            }
            if embedding {
                guard model.gguf.tensorsByName[TensorName.output.weight()] != nil else {
                    throw ModelError(file: path, field: "tensor \(weight).lora_a",
                                     reason: "adapts the token embedding of a model whose output matrix is that embedding, which llama.cpp cannot apply either")
                }
            } else if model.adaptableTensors[weight] == nil {
                throw ModelError(file: path, field: "tensor \(weight).lora_a",
                                 reason: "adapts \(weight), which llama.cpp multiplies without adapters (or Lumen does not adapt yet): only attention, feed-forward, router, recurrent and output projections take them")
            }
        }
    }
}

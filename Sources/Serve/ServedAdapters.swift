import GGUF
import Inference
import OpenAIAPI
import Synchronization

/// The LoRA adapters `lumen serve` loaded for a model (`--lora FILE`, `--lora-scaled FILE:SCALE`),
/// as llama-server keeps them: numbered from 0 in the order given, each with the scale a request
/// without a `lora` field gets (`--lora-init-without-apply` starts them at 0; `POST
/// /lora-adapters` changes them). A request's `lora` field applies the adapters it names at its
/// scales, and not the others, to that request alone. An adapter at scale 0 is left out, as
/// llama.cpp leaves it.
public final class ServedAdapters: Sendable {
    /// The adapters' files as the server was given them, by id.
    private let paths: [String]
    /// Every adapter at scale 1, checked against the model: the set a request's scales rescale.
    private let all: AdapterSet
    /// The scales of requests without a `lora` field, by id, and the set they make.
    private let current: Mutex<(scales: [Float], adapters: AdapterSet)>

    /// None.
    public static let none = ServedAdapters(paths: [], all: .none, scales: [])

    /// The adapters in `files` (read: a blocking read of each), checked against `model`, each at
    /// its scale for requests without a `lora` field.
    ///
    /// - Throws: `ModelError` naming the file that cannot be read, is not an adapter or does not
    ///   fit the model, or whose scale is not finite.
    public convenience init(files: [(path: String, scale: Float)], for model: LanguageModel) throws(ModelError) {
        let all = try AdapterSet(files: files.map { ($0.path, 1) }, for: model)
        if let file = files.first(where: { !$0.scale.isFinite }) {
            throw ModelError(file: file.path, field: "scale", reason: "is \(file.scale), not a finite number")
        }
        self.init(paths: files.map(\.path), all: all, scales: files.map(\.scale))
    }

    private init(paths: [String], all: AdapterSet, scales: [Float]) {
        self.paths = paths
        self.all = all
        current = Mutex((scales, all.rescaled(scales)))
    }

    /// `GET /lora-adapters`: each adapter's id, file and current scale.
    public var cards: [LoRAAdapterCard] {
        let scales = current.withLock { $0.scales }
        return paths.enumerated().map { LoRAAdapterCard(id: $0.offset, path: $0.element, scale: Double(scales[$0.offset])) }
    }

    /// `POST /lora-adapters`: the scales `entries` give become those of requests without a
    /// `lora` field; adapters not named get 0, as llama-server sets them.
    ///
    /// - Throws: `ServerError` (400) naming an id the server has not or a scale that is not finite.
    func setScales(_ entries: [LoRAScale]) throws(ServerError) {
        let scales = try scales(entries, field: "the body")
        let adapters = all.rescaled(scales)
        current.withLock { $0 = (scales, adapters) }
    }

    /// The adapters a request applies: those its `lora` field names at their scales, or, without
    /// the field, the server's at theirs.
    ///
    /// - Throws: `ServerError` (400) naming an id the server has not or a scale that is not finite.
    func adapters(for request: [LoRAScale]?) throws(ServerError) -> AdapterSet {
        guard let request else { return current.withLock { $0.adapters } }
        return all.rescaled(try scales(request, field: "lora"))
    }

    /// A scale per adapter: those `entries` name, 0 for the others.
    private func scales(_ entries: [LoRAScale], field: String) throws(ServerError) -> [Float] {
        var scales = [Float](repeating: 0, count: paths.count)
        for entry in entries {
            guard paths.indices.contains(entry.id) else {
                let ids = paths.isEmpty ? "this server loaded none (lumen serve --lora FILE)" : "this server's are 0…\(paths.count - 1)"
                throw .invalid("\(field): no LoRA adapter has id \(entry.id); \(ids)", param: field == "lora" ? "lora" : nil)
            }
            guard Float(entry.scale).isFinite else {
                throw .invalid("\(field): the scale of adapter \(entry.id) must be a finite number, got \(entry.scale)", param: field == "lora" ? "lora" : nil)
            }
            scales[entry.id] = Float(entry.scale)
        }
        return scales
    }
}

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
    /// One adapter: the file as the server was given it, and what was read from it.
    public struct Loaded: Sendable {
        public let path: String
        public let adapter: LoRAAdapter

        /// `adapter`, read from `path`.
        public init(path: String, adapter: LoRAAdapter) {
            self.path = path
            self.adapter = adapter
        }
    }

    /// The adapters, by id.
    let loaded: [Loaded]
    /// Every adapter at scale 1, checked against the model: the set a request's scales rescale.
    private let all: AdapterSet
    /// The scales of requests without a `lora` field, by id, and the set they make.
    private let current: Mutex<(scales: [Float], adapters: AdapterSet)>

    /// None.
    public static let none = ServedAdapters(checked: [], all: .none, scales: [])

    /// `loaded`, at `scales` (one per adapter), checked against `model`.
    ///
    /// - Throws: `ModelError` naming the adapter that does not fit the model, or a scale that is
    ///   not finite.
    public convenience init(_ loaded: [Loaded], scales: [Float], for model: LanguageModel) throws(ModelError) {
        precondition(loaded.count == scales.count, "one scale per adapter")
        let all = try AdapterSet(loaded.map { ($0.adapter, 1) }, for: model)
        if let index = scales.firstIndex(where: { !$0.isFinite }) {
            throw ModelError(file: loaded[index].path, field: "scale", reason: "is \(scales[index]), not a finite number")
        }
        self.init(checked: loaded, all: all, scales: scales)
    }

    private init(checked loaded: [Loaded], all: AdapterSet, scales: [Float]) {
        self.loaded = loaded
        self.all = all
        current = Mutex((scales, all.rescaled(scales)))
    }

    /// Whether the server loaded no adapter.
    public var isEmpty: Bool { loaded.isEmpty }

    /// `GET /lora-adapters`: each adapter's id, file and current scale.
    public var cards: [LoRAAdapterCard] {
        let scales = current.withLock { $0.scales }
        return loaded.enumerated().map { LoRAAdapterCard(id: $0.offset, path: $0.element.path, scale: Double(scales[$0.offset])) }
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
        var scales = [Float](repeating: 0, count: loaded.count)
        for entry in entries {
            guard loaded.indices.contains(entry.id) else {
                let ids = loaded.isEmpty ? "this server loaded none (lumen serve --lora FILE)" : "this server's are 0…\(loaded.count - 1)"
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

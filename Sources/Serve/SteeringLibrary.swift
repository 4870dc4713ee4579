import Foundation
import GGUF
import Inference
import OpenAIAPI
import RunRecords
import SparseAutoencoders

/// The control vectors and sparse autoencoders `lumen serve` was started with, by name
/// (`--control-vector-file NAME=FILE`, `--sae NAME=PATH`): a request steers with them by name
/// (`control_vectors`, `features`), never by a path of the server's machine. Each is checked
/// against a model when a request uses it, so one server can hold vectors for several models.
public struct SteeringLibrary: Sendable {
    /// A control vector or SAE, the name requests give it and the file or folder it was read from.
    public struct Named<Value: Sendable>: Sendable {
        /// The name requests give it.
        public let name: String
        /// The absolute path it was read from, which the run log keeps.
        public let path: String
        /// The vector or SAE.
        public let value: Value

        /// `value`, read from `path`, named `name`.
        public init(name: String, path: String, value: Value) {
            self.name = name
            self.path = path
            self.value = value
        }
    }

    /// The most features one request may set, over all its SAEs: each costs a dot product and a
    /// row update per token at its hook.
    public static let maximumFeatures = 256

    /// The control vectors, by name.
    public let vectors: [String: Named<ControlVector>]
    /// The SAEs, by name.
    public let saes: [String: Named<SparseAutoencoder>]
    /// The steering every request gets (`--control-vector`), as the run log keeps it: a request's
    /// own vectors join it, so they must be added after the same blocks.
    public let everyRequest: RunSteering?

    /// A library of `vectors` and `saes` (their names unique), beside the steering every request
    /// gets, `everyRequest`.
    public init(vectors: [Named<ControlVector>] = [], saes: [Named<SparseAutoencoder>] = [], everyRequest: RunSteering? = nil) {
        self.vectors = Dictionary(vectors.map { ($0.name, $0) }) { first, _ in first }
        self.saes = Dictionary(saes.map { ($0.name, $0) }) { first, _ in first }
        self.everyRequest = everyRequest
    }

    /// What a request's steering fields ask of `model`: the hooks that apply it to that request's
    /// sequence alone, and what the run log keeps (the request's vectors joined to every
    /// request's, and its features as interventions).
    ///
    /// - Throws: `ServerError` (400) naming the field: a name the server did not load, a scale or
    ///   value that is not finite, a layer range outside the model or without vectors, a feature
    ///   the SAE lacks, too many features, or a vector or SAE that does not fit the model.
    func steering(_ fields: SteeringFields, model: LanguageModel) throws(ServerError)
        -> (hooks: [any ForwardHook], logged: RunSteering?, interventions: [RunIntervention]) {
        var hooks: [any ForwardHook] = []
        var logged = everyRequest
        let blocks = try layerRange(fields, model: model)
        let requested = (fields.controlVectors ?? [:]).sorted { $0.key < $1.key }
        if !requested.isEmpty {
            var sum: ControlVector?
            var entries: [RunSteering.Vector] = []
            for (name, scale) in requested {
                guard let named = vectors[name] else { throw Self.unknown("control_vectors", "control vector", name, known: vectors.keys.sorted()) }
                guard scale.isFinite else { throw ServerError.invalid("control_vectors: the scale of '\(name)' must be a finite number", param: "control_vectors") }
                if let misfit = named.value.misfit(model) { throw ServerError.invalid("control_vectors: '\(name)' does not fit this model: \(misfit)", param: "control_vectors") }
                let scaled = named.value.scaled(by: Float(scale))
                sum = sum.map { $0 + scaled } ?? scaled
                if sum?.firstNonFiniteBlock != nil {
                    throw ServerError.invalid("control_vectors: '\(name)' times \(scale) is not finite", param: "control_vectors")
                }
                entries.append(RunSteering.Vector(path: named.path, scale: scale))
            }
            let range = blocks.map { [$0.lowerBound, $0.upperBound] }
            if let everyRequest {
                guard everyRequest.blocks == range else {
                    throw ServerError.invalid("control_vector_layer_range: this server adds its --control-vector after \(Self.describe(everyRequest.blocks)); "
                                              + "a request's control vectors join it, so they must be added after the same blocks", param: "control_vector_layer_range")
                }
            }
            logged = RunSteering(vectors: (everyRequest?.vectors ?? []) + entries, blocks: range)
            if let sum {
                let hook = sum.steering(blocks: blocks)
                do {
                    try hook.check(model)
                } catch {
                    throw ServerError.invalid("control_vectors: \(error.reason)", param: blocks == nil ? "control_vectors" : "control_vector_layer_range")
                }
                hooks.append(hook)
            }
        }
        var interventions: [RunIntervention] = []
        var featureCount = 0
        for (name, settings) in (fields.features ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let named = saes[name] else { throw Self.unknown("features", "SAE", name, known: saes.keys.sorted()) }
            featureCount += settings.count
            guard featureCount <= Self.maximumFeatures else {
                throw ServerError.invalid("features: a request may set at most \(Self.maximumFeatures) features", param: "features")
            }
            var values: [Int: Float] = [:]
            for (key, value) in settings {
                guard let feature = Int(key), String(feature) == key, (0..<named.value.featureCount).contains(feature) else {
                    throw ServerError.invalid("features: '\(name)' has features 0…\(named.value.featureCount - 1); '\(key)' is not one of them", param: "features")
                }
                guard value.isFinite else { throw ServerError.invalid("features: the value of '\(name)' feature \(key) must be a finite number", param: "features") }
                values[feature] = Float(value)
            }
            guard !values.isEmpty else { continue }
            let clamp = SAEFeatureClamp(named.value, values: values)
            do {
                try clamp.check(model)
            } catch {
                throw ServerError.invalid("features: '\(name)' cannot run on this model: \(error.reason)", param: "features")
            }
            hooks.append(clamp)
            for (feature, value) in clamp.settings {
                interventions.append(RunIntervention(settingFeature: feature, of: named.path, point: named.value.point.rawValue, block: named.value.block ?? 0,
                                                     value: Double("\(value)") ?? Double(value)))
            }
        }
        return (hooks, logged, interventions)
    }

    /// The request's `control_vector_layer_range` as blocks of `model`, nil when not given.
    private func layerRange(_ fields: SteeringFields, model: LanguageModel) throws(ServerError) -> ClosedRange<Int>? {
        guard let range = fields.controlVectorLayerRange else { return nil }
        let last = model.configuration.blockCount - 1
        guard range.count == 2, range[0] >= 0, range[0] <= range[1], range[1] <= last else {
            throw ServerError.invalid("control_vector_layer_range must be [first, last] with 0 ≤ first ≤ last ≤ \(last) (this model's blocks), got \(range)",
                                      param: "control_vector_layer_range")
        }
        guard !(fields.controlVectors ?? [:]).isEmpty else {
            throw ServerError.invalid("control_vector_layer_range needs control_vectors: the vectors it places", param: "control_vector_layer_range")
        }
        return range[0]...range[1]
    }

    /// The refusal of `name`, which is no `kind` the server loaded.
    private static func unknown(_ field: String, _ kind: String, _ name: String, known: [String]) -> ServerError {
        let loaded = known.isEmpty ? "none was loaded (lumen serve \(kind == "SAE" ? "--sae" : "--control-vector-file") NAME=…)" : "loaded: \(known.joined(separator: ", "))"
        return ServerError.invalid("\(field): no \(kind) named '\(name)' is loaded; \(loaded)", param: field)
    }

    private static func describe(_ blocks: [Int]?) -> String {
        blocks.map { "blocks \($0[0])…\($0[1])" } ?? "every block"
    }

    // MARK: Listings

    /// `GET /control-vectors`: each vector's name, the blocks it has directions for, and each
    /// direction's length.
    var vectorList: SteeringList<ControlVectorCard> {
        SteeringList(data: vectors.values.sorted { $0.name < $1.name }.map { named in
            let blocks = named.value.directions.keys.sorted()
            let norms = blocks.map { block in Double((named.value.directions[block] ?? []).reduce(0) { $0 + $1 * $1 }.squareRoot()) }
            return ControlVectorCard(name: named.name, width: named.value.width, blocks: blocks, norms: norms)
        })
    }

    /// `GET /saes`: each SAE's name, hook (TransformerLens' name), architecture and widths.
    var saeList: SteeringList<SAECard> {
        SteeringList(data: saes.values.sorted { $0.name < $1.name }.map { named in
            SAECard(name: named.name, hook: named.value.hookName, architecture: named.value.architecture.name, dIn: named.value.inputWidth, dSAE: named.value.featureCount)
        })
    }
}

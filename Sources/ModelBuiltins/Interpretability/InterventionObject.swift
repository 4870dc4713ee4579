import Evaluation
import Foundation
import Executors
import GGUF
import Inference
import LumenLanguage
import RunLog
import SparseAutoencoders

/// An intervention in cells (`ablate(…)`, `intervene(…)`, `patch(…)`, `setFeature(…)`): a change inside the forward pass that
/// `trace(…, interventions:)` and `generate(…, interventions:)` make, as the run log keeps it.
final class InterventionObject: HostObject {
    /// The change, as the run log keeps it.
    let logged: RunIntervention
    /// For a patch: the source run's rows at the point and block, one per position, so the cell
    /// need not run the source again.
    let sourceRows: [Float]?
    /// For a feature: the SAE, so the cell need not read it again.
    let sae: SparseAutoencoder?

    init(_ logged: RunIntervention, sourceRows: [Float]? = nil, sae: SparseAutoencoder? = nil) {
        self.logged = logged
        self.sourceRows = sourceRows
        self.sae = sae
    }

    var typeName: String { "Intervention" }
    var members: HostMembers { .none }

    var summary: String {
        let heads = logged.heads.map { " heads \($0.map(String.init).joined(separator: ", "))" } ?? ""
        let neurons = logged.neurons.map { " neurons \($0.map(String.init).joined(separator: ", "))" } ?? ""
        let positions = logged.positions.map { " at positions \($0.map(String.init).joined(separator: ", "))" } ?? ""
        let place = ActivationPoint(name: logged.point)?.layout.perBlock == false ? logged.point : "\(logged.point) of block \(logged.block)"
        switch logged.kind {
        case .ablate:
            return "Intervention(ablate \(place)\(heads)\(neurons)\(positions))"
        case .edit:
            let scale = logged.scale.map { "scale by \($0)" }
            let addition = logged.addition.map { $0.count == 1 ? "add \($0[0])" : "add \($0.count) values" }
            return "Intervention(\([scale, addition].compactMap { $0 }.joined(separator: " and ")) \(place)\(heads)\(neurons)\(positions))"
        case .patch:
            let from = logged.sourcePositions.map { " (its positions \($0.map(String.init).joined(separator: ", ")))" } ?? ""
            return "Intervention(patch \(logged.point) of block \(logged.block)\(positions) from a run of \(logged.source?.count ?? 0) tokens\(from))"
        case .feature:
            let name = logged.sae.map { ($0 as NSString).lastPathComponent } ?? "an SAE"
            return "Intervention(set feature \(logged.feature ?? 0) of \(name) to \(logged.value ?? 0) at \(place)\(positions))"
        }
    }
    var mimeBundle: MIMEBundle { .plainText(summary) }
}

extension RunIntervention {
    /// The hook that makes this change in a model of configuration `c`; a patch patches in
    /// `sourceRows` (the source run's rows at its point and block), a feature is set in `sae`.
    func hook(_ c: ModelConfiguration, sourceRows: [Float]?, sae: SparseAutoencoder?, file: String) throws(ModelError) -> any ForwardHook {
        guard let point = ActivationPoint(name: self.point) else {
            throw ModelError(file: file, field: "intervention", reason: "no point is called \(self.point.debugDescription); the points are \(ActivationPoint.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        switch kind {
        case .ablate, .edit:
            return ActivationEdit(point, block: block, positions: positions, heads: heads ?? [], headDimension: c.layer(block).headDimension,
                                  neurons: neurons ?? [], scale: kind == .ablate ? 0 : Float(scale ?? 1), addition: kind == .ablate ? [] : addition ?? [])
        case .patch:
            return ActivationPatch(point, block: block, source: sourceRows ?? [], width: point.width(in: c, layer: block, contextLength: 0),
                                   positions: positions ?? [], from: sourcePositions)
        case .feature:
            guard let sae, let feature, let value else {
                throw ModelError(file: file, field: "intervention", reason: "a feature intervention needs its SAE, feature and value")
            }
            return SAEFeatureClamp(sae, feature: feature, value: Float(value), positions: positions.map(Set.init))
        }
    }

    /// The hook that makes this change on `session`'s model as the logged run did: a patch runs
    /// its source tokens again to capture what it patches in; a feature's SAE is read again from
    /// its file, at the logged hook.
    func hook(on session: ModelSession) async throws(ModelError) -> any ForwardHook {
        var rows: [Float]?
        if kind == .patch, let source, let point = ActivationPoint(name: point) {
            let capture = ActivationCapture([point], blocks: [block])
            _ = try await session.evaluate(source, hooks: [capture])
            rows = capture.take(point, block: block)
        }
        var reader: SparseAutoencoder?
        if kind == .feature, let path = sae {
            let hookName = ActivationPoint(name: point)?.hookName(block: block)
            let scale = saeInputScale.map(Float.init)
            reader = try await DedicatedThread.run(name: "lumen-load") { () throws(ModelError) in try SparseAutoencoder.load(path: path, hook: hookName, inputScale: scale) }
        }
        return try hook(session.model.configuration, sourceRows: rows, sae: reader, file: session.model.gguf.path)
    }
}

import GGUF
import Inference
import LumenLanguage
import RunLog
import Tensors

extension ModelLibrary {
    static let ablate = Builtin(
        name: "ablate",
        signature: "ablate(block: Int, heads: [Int]? = nil, point: String? = nil) -> Intervention",
        summary: "An ablation for trace(…, interventions:) and generate(…, interventions:): zeroes some heads' outputs in a block (heads:, a range or an array), or a block's attention or feed-forward output (point: \"attn_out\" or \"ffn_out\"), at every position."
    ) { arguments, context in
        guard let block = try arguments.labelledInteger("block") else {
            throw LumenError(.value, "block: is needed (the block to ablate in)", at: context.location)
        }
        let heads = try arguments.labelled("heads").map { argument throws(LumenError) in try integers(argument, "heads") }
        let point = try arguments.labelledString("point")
        try arguments.finish()
        switch (heads, point) {
        case (let heads?, nil):
            return .host(InterventionObject(RunIntervention(ablating: ActivationPoint.headOutputs.rawValue, block: block, heads: heads)))
        case (nil, let point?):
            guard [ActivationPoint.attentionOutput, .feedForwardOutput].map(\.rawValue).contains(point) else {
                throw LumenError(.value, "point: \(point.debugDescription) cannot be ablated: choose \"attn_out\" or \"ffn_out\" (or heads:)", at: context.location)
            }
            return .host(InterventionObject(RunIntervention(ablating: point, block: block)))
        default:
            throw LumenError(.value, "ablate needs heads: (some heads) or point: (\"attn_out\" or \"ffn_out\"), one of the two", at: context.location)
        }
    }

    static let patch = Builtin(
        name: "patch",
        signature: "patch(_ source: Trace, block: Int, positions: [Int] = all, point: \"resid\") -> Intervention",
        summary: "Activation patching for trace(…, interventions:) and generate(…, interventions:): replaces the activations at point of block, at positions, with those the source trace kept there (a clean run's, patched into a corrupted one)."
    ) { arguments, context in
        let source: TraceObject = try hostObject(&arguments, "source", "a Trace (from trace(m, prompt, keep:)) to patch from")
        guard let block = try arguments.labelledInteger("block") else {
            throw LumenError(.value, "block: is needed (the block to patch)", at: context.location)
        }
        let positions = try arguments.labelled("positions").map { argument throws(LumenError) in try integers(argument, "positions") }
        let name = try arguments.labelledString("point") ?? ActivationPoint.blockOutput.rawValue
        try arguments.finish()
        guard let point = ActivationPoint(name: name), point != .attentionProbabilities else {
            throw LumenError(.value, "point: \(name.debugDescription) cannot be patched: choose resid, attn_out, ffn_out or heads", at: context.location)
        }
        guard let tensor = source.tensors[point], let index = source.index(ofBlock: block), let rows = try? tensor.indexed([.index(index)]) else {
            throw LumenError(.value, "the source trace did not keep \(name) at block \(block): trace it with keep: [\"\(name)\"] and that block", at: context.location)
        }
        guard source.interventions.isEmpty, source.generated == nil else {
            throw LumenError(.value, "patch from a trace of a plain prompt: the source was itself changed or generated, which the run log could not repeat", at: context.location)
        }
        let count = source.ids.count
        let chosen = (positions ?? Array(0..<count)).map { $0 < 0 ? count + $0 : $0 }
        if let outside = chosen.first(where: { !(0..<count).contains($0) }) {
            throw LumenError(.index, "position \(outside) is not one of the source's \(count) positions", at: context.location)
        }
        return .host(InterventionObject(RunIntervention(patching: name, block: block, positions: chosen, source: source.ids), sourceRows: rows.values))
    }

    /// An argument that is an Int, a Range or an array of Ints, as Ints.
    private static func integers(_ argument: (Value, SourceLocation), _ label: String) throws(LumenError) -> [Int] {
        let (value, location) = argument
        if case .integer(let number) = value { return [number] }
        let elements = try? Operators.elements(of: value, at: location)
        guard let elements, !elements.isEmpty else {
            throw LumenError(.type, "\(label): needs an Int, a range or an array of Ints, got \(value.printed)", at: location)
        }
        return try elements.map { element throws(LumenError) in
            guard case .integer(let number) = element else { throw LumenError(.type, "\(label): needs Ints, got \(element.typeName)", at: location) }
            return number
        }
    }

    /// The interventions a call is asked to make (`interventions:`, an array of ablate(…) and
    /// patch(…) values) as hooks for `model`, with what the run log keeps of them.
    static func interventions(_ arguments: inout Arguments, model: any GenerativeModel, at location: SourceLocation) throws(LumenError)
        -> (hooks: [any ForwardHook], logged: [RunIntervention]) {
        guard let (value, valueLocation) = arguments.labelled("interventions") else { return ([], []) }
        let local: LoadedModel
        do {
            local = try model.loaded(for: "interventions:")
        } catch {
            throw LumenError(.value, error.description, at: valueLocation)
        }
        let elements = (try? Operators.elements(of: value, at: valueLocation)) ?? [value]
        let objects = try elements.map { element throws(LumenError) in
            guard case .host(let object as InterventionObject) = element else {
                throw LumenError(.type, "interventions: needs ablate(…) and patch(…) values, got \(element.typeName)", at: valueLocation)
            }
            return object
        }
        let loaded = try modelCall(at: location) { () throws(ModelError) in try local.model() }
        let hooks = try modelCall(at: valueLocation) { () throws(ModelError) in
            try objects.map { object throws(ModelError) in try object.logged.hook(loaded.configuration, sourceRows: object.sourceRows, file: local.path) }
        }
        return (hooks, objects.map(\.logged))
    }
}

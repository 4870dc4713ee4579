import GGUF
import Inference
import LumenLanguage
import RunLog
import Tensors

extension ModelLibrary {
    static let ablate = Builtin(
        name: "ablate",
        signature: "ablate(block: Int?, point: String = \"z\" with heads:, heads: [Int]? = nil, positions: [Int]? = nil, neurons: [Int]? = nil) -> Intervention",
        summary: "An ablation for trace(…, interventions:) and generate(…, interventions:): zeroes a point of a block (point: any a block has but pattern — attn_out, mlp_out, resid_mid, mlp_post, … — or, without block:, embed, ln_final or logits) at every position or only positions:, whole or only some heads (heads:, a range or an array; point: z unless q, k or v is given) and some neurons (neurons:, elements of each row — of each head's slice with heads:)."
    ) { arguments, context in
        let site = try editSite(&arguments, verb: "ablate", at: context.location)
        try arguments.finish()
        guard site.heads != nil || site.named else {
            throw LumenError(.value, "ablate needs point: (what to zero) or heads: (which heads of z to zero), or both", at: context.location)
        }
        return .host(InterventionObject(RunIntervention(ablating: site.point.rawValue, block: site.block, heads: site.heads, positions: site.positions, neurons: site.neurons)))
    }

    static let intervene = Builtin(
        name: "intervene",
        signature: "intervene(block: Int?, point: String, heads: [Int]? = nil, positions: [Int]? = nil, neurons: [Int]? = nil, scale: Number = 1, add: Number, [Number] or Tensor = 0) -> Intervention",
        summary: "An edit for trace(…, interventions:) and generate(…, interventions:), as a TransformerLens hook that scales or adds: each chosen element x of point in block (embed, ln_final and logits take no block:) becomes x · scale + add — at every position or positions:, in every head or heads: (q, k, v, z), every element of the row (of each head's slice) or neurons:. add: one number, or one per chosen element (a Tensor of one axis: a direction of the residual stream's width, say). intervene(block: 3, point: \"mlp_post\", neurons: [42], scale: 5) amplifies one MLP neuron."
    ) { arguments, context in
        let site = try editSite(&arguments, verb: "change", at: context.location)
        let scale = try arguments.labelledNumber("scale")
        var addition: [Float]?
        if let (value, location) = arguments.labelled("add") {
            if let number = Operators.number(value) {
                addition = [Float(number)]
            } else {
                let tensor = try TensorObject.tensor(value, at: location)
                guard tensor.rank == 1 else { throw LumenError(.value, "add: needs a number or one axis of numbers, got a Tensor \(tensor.shapeText)", at: location) }
                addition = Array(tensor.values)
            }
        }
        try arguments.finish()
        guard site.named else { throw LumenError(.value, "intervene needs point: (what to change)", at: context.location) }
        guard scale != nil || addition != nil else {
            throw LumenError(.value, "intervene needs scale:, add: or both (x becomes x · scale + add); ablate(…) zeroes", at: context.location)
        }
        return .host(InterventionObject(RunIntervention(editing: site.point.rawValue, block: site.block, heads: site.heads, positions: site.positions,
                                                        neurons: site.neurons, scale: scale, addition: addition)))
    }

    /// Where an `ablate` or `intervene` changes activations: `point:` (z by default, `named`
    /// false then), `block:` (needed for a point in a block, refused for embed, ln_final and
    /// logits, which take 0), `heads:`, `positions:` (counted from 0) and `neurons:`.
    private static func editSite(_ arguments: inout Arguments, verb: String, at location: SourceLocation) throws(LumenError)
        -> (point: ActivationPoint, named: Bool, block: Int, heads: [Int]?, positions: [Int]?, neurons: [Int]?) {
        let block = try arguments.labelledInteger("block")
        let heads = try arguments.labelled("heads").map { argument throws(LumenError) in try integers(argument, "heads") }
        let positions = try positionsFromZero(&arguments)
        let neurons = try arguments.labelled("neurons").map { argument throws(LumenError) in try integers(argument, "neurons") }
        let name = try arguments.labelledString("point")
        let point = name ?? ActivationPoint.headOutputs.rawValue
        guard let known = ActivationPoint(name: point), known.isEditable else {
            throw LumenError(.value, "point: \(point.debugDescription) cannot be \(verb == "ablate" ? "ablated" : "changed"): choose one of \(ActivationPoint.editable)", at: location)
        }
        if known.layout.perBlock {
            guard let block else { throw LumenError(.value, "block: is needed (the block to \(verb) in)", at: location) }
            return (known, name != nil, block, heads, positions, neurons)
        }
        guard block == nil else { throw LumenError(.value, "\(known.rawValue) is not in a block: leave block: out", at: location) }
        return (known, name != nil, 0, heads, positions, neurons)
    }

    static let patch = Builtin(
        name: "patch",
        signature: "patch(_ source: Trace, block: Int, point: \"resid_post\", positions: [Int] = all, from: [Int]? = nil) -> Intervention",
        summary: "Activation patching for trace(…, interventions:) and generate(…, interventions:): replaces the activations at point of block, at positions (of the run patched; negative from the end of the source), with those the source trace kept there (a clean run's, patched into a corrupted one) — or, with from:, those at the source's positions from: (as many), for runs of different lengths. A position the run patched does not have is an error, never a silent no-op."
    ) { arguments, context in
        let source: TraceObject = try hostObject(&arguments, "source", "a Trace (from trace(m, prompt, keep:)) to patch from")
        guard let block = try arguments.labelledInteger("block") else {
            throw LumenError(.value, "block: is needed (the block to patch)", at: context.location)
        }
        let positions = try arguments.labelled("positions").map { argument throws(LumenError) in try integers(argument, "positions") }
        let from = try arguments.labelled("from").map { argument throws(LumenError) in try integers(argument, "from") }
        let name = try arguments.labelledString("point") ?? ActivationPoint.blockOutput.rawValue
        try arguments.finish()
        guard let point = ActivationPoint(name: name), point.layout.perBlock, point != .attentionProbabilities else {
            let choices = ActivationPoint.allCases.filter { $0.layout.perBlock && $0 != .attentionProbabilities }.map(\.rawValue).joined(separator: ", ")
            throw LumenError(.value, "point: \(name.debugDescription) cannot be patched in a block: choose one of \(choices)", at: context.location)
        }
        guard let tensor = source.tensors[point], let index = source.index(ofBlock: block), let rows = try? tensor.indexed([.index(index)]) else {
            throw LumenError(.value, "the source trace did not keep \(point.rawValue) at block \(block): trace it with keep: [\"\(point.rawValue)\"] and that block", at: context.location)
        }
        guard source.interventions.isEmpty, source.generated == nil else {
            throw LumenError(.value, "patch from a trace of a plain prompt: the source was itself changed or generated, which the run log could not repeat", at: context.location)
        }
        guard source.trace.positions == nil else {
            throw LumenError(.value, "patch from a trace of every position: the source kept only some (positions:)", at: context.location)
        }
        let count = source.ids.count
        let resolve = { (position: Int) in position < 0 ? count + position : position }
        var sourcePositions: [Int]?
        if let from {
            guard let positions, positions.count == from.count else {
                throw LumenError(.value, "from: gives the source's position for each of positions: (this run's): \(from.count) for \(positions?.count ?? 0)", at: context.location)
            }
            sourcePositions = from.map(resolve)
        }
        let chosen = (positions ?? Array(0..<count)).map { sourcePositions == nil ? resolve($0) : $0 }
        if let outside = (sourcePositions ?? chosen).first(where: { !(0..<count).contains($0) }) {
            throw LumenError(.index, "position \(outside) is not one of the source's \(count) positions (0…\(count - 1))", at: context.location)
        }
        if let negative = chosen.first(where: { $0 < 0 }) {
            throw LumenError(.index, "positions: \(negative): with from:, positions are this run's, counted from 0", at: context.location)
        }
        return .host(InterventionObject(RunIntervention(patching: point.rawValue, block: block, positions: chosen, source: source.ids, sourcePositions: sourcePositions),
                                        sourceRows: Array(rows.values)))
    }

    /// An argument that is an Int, a Range or an array of Ints, as Ints.
    /// `positions:`, counted from 0 (nil when not given): an intervention is made before the
    /// run's length is known, so a negative position is refused.
    static func positionsFromZero(_ arguments: inout Arguments) throws(LumenError) -> [Int]? {
        guard let (value, location) = arguments.labelled("positions") else { return nil }
        let chosen = try integers((value, location), "positions")
        if let negative = chosen.first(where: { $0 < 0 }) {
            throw LumenError(.index, "positions: \(negative): count positions from 0 (the run's length is known only when it runs), got \(value.printed)", at: location)
        }
        return chosen
    }

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
                throw LumenError(.type, "interventions: needs ablate(…), intervene(…), patch(…) and setFeature(…) values, got \(element.typeName)", at: valueLocation)
            }
            return object
        }
        let loaded = try modelCall(at: location) { () throws(ModelError) in try local.model() }
        let hooks = try modelCall(at: valueLocation) { () throws(ModelError) in
            try objects.map { object throws(ModelError) in try object.logged.hook(loaded.configuration, sourceRows: object.sourceRows, sae: object.sae, file: local.path) }
        }
        return (hooks, objects.map(\.logged))
    }
}

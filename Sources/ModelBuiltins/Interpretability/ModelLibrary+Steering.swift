import Executors
import Foundation
import GGUF
import Inference
import LumenLanguage
import RunLog
import Tensors

extension ModelLibrary {
    static let controlVector = Builtin(
        name: "controlVector",
        signature: "controlVector(_ path: String) -> ControlVector",
        summary: "Reads a control vector (llama.cpp's control-vector GGUF, as llama-cvector-generator and lumen steering write it): a direction per block, for generate(…, steer:)."
    ) { arguments, context in
        let path = try arguments.string(try arguments.requirePositional("path"), "path")
        try arguments.finish()
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        // Reading the file is blocking work: it runs on a thread of its own.
        let vector: ControlVector
        do {
            vector = try await DedicatedThread.run(name: "lumen-load") { () throws(ModelError) in try ControlVector(contentsOf: absolute) }
        } catch {
            throw LumenError(.model, "\(error)", at: context.location)
        }
        return .host(ControlVectorObject(vector: vector, source: RunSteering.Vector(path: absolute, scale: 1)))
    }

    static let steeringVector = Builtin(
        name: "steeringVector",
        signature: "steeringVector(_ model, positive: [String], negative: [String], method: String = \"last\") -> ControlVector",
        summary: "A contrastive steering vector, a direction for each block after the first from the residual stream after it. method: \"last\" (the default: the mean at the positive prompts' last token minus the negatives', at the stream's own scale), \"mean\" or \"pca\" (llama-cvector-generator's: prompts in pairs, the differences at every position averaged or their first principal direction, unit length). Steer with generate(…, steer:, steerScale:, steerBlocks:)."
    ) { arguments, context in
        let model = try loadedModel(&arguments)
        func prompts(_ label: String) throws(LumenError) -> [String] {
            let (value, location) = try arguments.requireLabelled(label)
            let elements = try? Operators.elements(of: value, at: location)
            guard let elements, !elements.isEmpty else {
                throw LumenError(.type, "\(label): needs a non-empty array of Strings, got \(value.typeName)", at: location)
            }
            return try elements.map { element throws(LumenError) in
                guard case .string(let text) = element else { throw LumenError(.type, "\(label): needs Strings, got \(element.typeName)", at: location) }
                return text
            }
        }
        let (positive, negative) = (try prompts("positive"), try prompts("negative"))
        var method = ContrastiveMethod.last
        if let (value, location) = arguments.labelled("method") {
            guard case .string(let name) = value, let chosen = ContrastiveMethod(rawValue: name) else {
                throw LumenError(.value, "method: must be one of \(ContrastiveMethod.names), got \(value.description)", at: location)
            }
            if chosen != .last, positive.count != negative.count {
                throw LumenError(.value, "method: \"\(name)\" pairs positive i with negative i: give as many of each, not \(positive.count) and \(negative.count)", at: location)
            }
            method = chosen
        }
        try arguments.finish()
        let vector = try await onSession(of: model, at: context.location) { session throws(ModelError) in
            try await ControlVector.contrastive(session: session, positive: positive, negative: negative, method: method)
        }
        let source = RunSteering.Vector(positive: positive, negative: negative, method: method == .last ? nil : method.rawValue, scale: 1)
        return .host(ControlVectorObject(vector: vector, source: source))
    }

    static let normalize = Builtin(
        name: "normalize",
        signature: "normalize(_ vector: ControlVector) -> ControlVector",
        summary: "The control vector with each block's direction scaled to unit length, so that steerScale: means the same at every block (llama-cvector-generator's vectors are unit length; a \"last\" vector is at the residual stream's scale)."
    ) { arguments, context in
        let (value, location) = try arguments.requirePositional("vector")
        try arguments.finish()
        guard case .host(let object as ControlVectorObject) = value else {
            throw LumenError(.type, "normalize: needs a ControlVector, got \(value.typeName) (a Tensor is normalised with x / norm(x))", at: location)
        }
        var source = object.source
        source.normalized = true
        return .host(ControlVectorObject(vector: object.vector.normalized(), source: source))
    }

    /// The steering `generate` is asked for (`steer:`, `steerScale:`, `steerBlocks:`): the hook that
    /// applies it and what the run log keeps of it; none without `steer:`.
    static func steering(_ arguments: inout Arguments) throws(LumenError) -> (hooks: [any ForwardHook], logged: RunSteering?) {
        let scale = try arguments.labelledNumber("steerScale") ?? 1
        let blocks = arguments.labelled("steerBlocks")
        guard let (value, location) = arguments.labelled("steer") else {
            if let (_, location) = blocks { throw LumenError(.value, "steerBlocks: needs steer: (a control vector)", at: location) }
            return ([], nil)
        }
        let range = try blocks.map { value, location throws(LumenError) in try steerBlocks(value, at: location) }
        let (vector, source) = try steeringVector(value, blocks: range, at: location)
        var scaled = source
        scaled.scale = scale
        let steering = vector.scaled(by: Float(scale))
        if let block = steering.firstNonFiniteBlock {
            let (_, scaleLocation) = arguments.labelled("steerScale") ?? (value, location)
            throw LumenError(.value, "steer: times steerScale: \(scale) is not finite at block \(block): the vector and its scale must give finite numbers",
                             at: scaleLocation)
        }
        return ([steering.steering(blocks: range)],
                RunSteering(vectors: [scaled], blocks: range.map { [$0.lowerBound, $0.upperBound] }))
    }

    /// The blocks `steerBlocks:` gives: a range such as 6...9.
    static func steerBlocks(_ value: Value, at location: SourceLocation) throws(LumenError) -> ClosedRange<Int> {
        guard case .range(let lower, let upper) = value, lower >= 0, upper > lower else {
            throw LumenError(.type, "steerBlocks: needs a range of blocks such as 6...9, got \(value.printed)", at: location)
        }
        return lower...(upper - 1)
    }

    /// The control vector `steer:` gives, with where it came from: a ControlVector, or a Tensor of
    /// one axis (a direction made in cells, such as a difference of two traces' residual
    /// streams), added after each block of `blocks`, which it needs.
    private static func steeringVector(_ value: Value, blocks: ClosedRange<Int>?, at location: SourceLocation) throws(LumenError)
        -> (ControlVector, RunSteering.Vector) {
        switch value {
        case .host(let object as ControlVectorObject):
            return (object.vector, object.source)
        case .host(let object as TensorObject):
            guard object.tensor.rank == 1 else {
                throw LumenError(.value, "steer: needs a Tensor of one axis (a direction of the residual stream's width), got \(object.tensor.shapeText)", at: location)
            }
            guard let blocks else { throw LumenError(.value, "steer: with a Tensor needs steerBlocks: (the blocks to add it after)", at: location) }
            let values = Array(object.tensor.values)
            return (ControlVector(direction: values, blocks: blocks), RunSteering.Vector(values: values, scale: 1))
        default:
            throw LumenError(.type, "steer: needs a ControlVector (from controlVector or steeringVector) or a Tensor, got \(value.typeName)", at: location)
        }
    }
}

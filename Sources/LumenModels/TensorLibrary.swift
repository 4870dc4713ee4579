import Executors
import Foundation
import Inference
import LumenLanguage

/// The built-ins that work with tensors: `tensor`, `norm`, `dot`, `cosine`, `topk` and `save`
/// (`sum`, `mean`, `max` and `min` of the standard library reduce them too).
final class TensorLibrary: LumenLibrary {
    let builtins: [Builtin] = [tensor, norm, dot, cosine, topk, save]

    static let tensor = Builtin(
        name: "tensor",
        signature: "tensor(_ values: [Number] or [[Number]] …) -> Tensor",
        summary: "A Tensor of nested arrays of numbers (all of one shape at each depth)."
    ) { arguments, context in
        let argument = try arguments.requirePositional("values")
        try arguments.finish()
        let made = try TensorObject.tensor(argument.0, at: argument.1)
        guard made.rank > 0 else { throw LumenError(.type, "tensor() needs an array of numbers, got \(argument.0.typeName)", at: argument.1) }
        return .host(TensorObject(made))
    }

    static let norm = Builtin(
        name: "norm",
        signature: "norm(_ x: Tensor) -> Tensor or Double",
        summary: "The Euclidean norm over the last axis (a number for a Tensor of one axis)."
    ) { arguments, _ in
        let x = try tensorArgument(&arguments, "x")
        try arguments.finish()
        return TensorObject.value(x.norms())
    }

    static let dot = overLastAxis(
        name: "dot", of: "The dot product over the last axis; a shape that ends the other's repeats along its leading axes (NumPy's broadcasting).",
        Tensor.dot)

    static let cosine = overLastAxis(name: "cosine", of: "The cosine similarity over the last axis, broadcast as dot.", Tensor.cosine)

    /// A built-in `name(_ a: Tensor, _ b: Tensor)` giving `combine(a, b)`, or an error naming
    /// both shapes when they do not broadcast.
    private static func overLastAxis(name: String, of summary: String, _ combine: @escaping @Sendable (Tensor, Tensor) -> Tensor?) -> Builtin {
        Builtin(name: name, signature: "\(name)(_ a: Tensor, _ b: Tensor) -> Tensor or Double", summary: summary) { arguments, context in
            let (a, b) = (try tensorArgument(&arguments, "a"), try tensorArgument(&arguments, "b"))
            try arguments.finish()
            guard let result = combine(a, b) else {
                throw LumenError(.value, "shapes \(TensorObject.shapeText(a)) and \(TensorObject.shapeText(b)) do not broadcast: one must end the other, over their last axis", at: context.location)
            }
            return TensorObject.value(result)
        }
    }

    static let topk = Builtin(
        name: "topk",
        signature: "topk(_ x: Tensor, _ k: Int = 10) -> [\"indices\": [Int], \"values\": [Double], \"labels\": [String]]",
        summary: "The k largest elements of a Tensor of one axis, largest first: their indices, values and labels (the tokens, for logits)."
    ) { arguments, context in
        let x = try tensorArgument(&arguments, "x")
        let k = try arguments.nextPositional().map { argument throws(LumenError) in try arguments.integer(argument, "k") } ?? 10
        try arguments.finish()
        guard x.rank == 1 else {
            throw LumenError(.value, "topk() needs a Tensor of one axis, got \(TensorObject.shapeText(x)): index it first (x[0])", at: context.location)
        }
        guard k > 0 else { throw LumenError(.value, "k must be positive, got \(k)", at: context.location) }
        let top = x.top(k)
        return .dictionary(LumenDictionary([
            ("indices", .array(top.map { .integer($0.index) })),
            ("values", .array(top.map { .double(Double($0.value)) })),
            ("labels", .array(top.map { .string(x.label(axis: 0, index: $0.index)) })),
        ]))
    }

    static let save = Builtin(
        name: "save",
        signature: "save(_ x: Tensor or Trace or [String: Tensor] or State, _ path: String)",
        summary: "Writes NumPy files: a Tensor as .npy; a Trace (its tensors and token ids) or a dictionary of Tensors as .npz, which numpy.load reads. A State goes to a file of its own, bound to its model file's SHA-256 (loadState reads it)."
    ) { arguments, context in
        let (value, location) = try arguments.requirePositional("x")
        let path = try arguments.string(try arguments.requirePositional("path"), "path")
        try arguments.finish()
        if case .host(let state as StateObject) = value {
            try await ModelLibrary.save(state, to: path, context: context)
            return .null
        }
        let archive = path.hasSuffix(".npz")
        guard archive || path.hasSuffix(".npy") else {
            throw LumenError(.value, "path \(path.debugDescription) must end in .npy (one Tensor) or .npz (several)", at: context.location)
        }
        var arrays: [(name: String, values: [Float], shape: [Int])] = []
        switch value {
        case .host(let object as TensorObject):
            arrays = [("arr_0", object.tensor.values, object.tensor.shape)]
        case .host(let trace as TraceObject):
            guard archive else { throw LumenError(.value, "a Trace holds several tensors: save it as .npz", at: context.location) }
            arrays = trace.trace.points.compactMap { point in trace.tensors[point].map { (point.rawValue, $0.values, $0.shape) } }
            arrays.append(("ids", trace.ids.map(Float.init), [trace.ids.count]))
            if let logits = trace.logits { arrays.append(("logits", logits, [logits.count])) }
        case .dictionary(let dictionary) where archive:
            arrays = try dictionary.pairs.map { pair throws(LumenError) in
                guard case .string(let name) = pair.key else { throw LumenError(.type, "an .npz's names are Strings, got \(pair.key.typeName)", at: location) }
                let made = try TensorObject.tensor(pair.value, at: location)
                return (name, made.values, made.shape)
            }
        default:
            throw LumenError(.type, "save() writes a Tensor (.npy), or a Trace or a dictionary of Tensors (.npz), not \(value.typeName) to \(path)", at: location)
        }
        guard archive || arrays.count == 1 else { throw LumenError(.value, "several tensors need an .npz path", at: context.location) }
        let data: Data
        do {
            data = archive ? try NumPyArchive.encode(arrays) : NumPyFile.encode(arrays[0].values, shape: arrays[0].shape)
        } catch {
            throw LumenError(.value, "cannot write \(path): \(error)", at: context.location)
        }
        // Writing is blocking work: it runs on a thread of its own, which hands back why it failed.
        let failure = await DedicatedThread.run(name: "lumen-save") { () -> String? in
            do { try data.write(to: URL(fileURLWithPath: path)) } catch { return error.localizedDescription }
            return nil
        }
        if let failure { throw LumenError(.value, "cannot write \(path): \(failure)", at: context.location) }
        return .null
    }

    /// The next positional argument as a tensor.
    private static func tensorArgument(_ arguments: inout Arguments, _ name: String) throws(LumenError) -> Tensor {
        let (value, location) = try arguments.requirePositional(name)
        return try TensorObject.tensor(value, at: location)
    }
}

import Executors
import Foundation
import Inference
import LumenLanguage
import Tensors

/// `save`: tensors, traces and dictionaries of tensors as NumPy files, states as files of their
/// own (the tensor built-ins themselves are the language's, `TensorLibrary`).
final class SaveLibrary: LumenLibrary {
    let builtins: [Builtin] = [save]

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
}

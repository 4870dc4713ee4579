import Executors
import Foundation
import Tensors

/// A host object that `save(x, path)` writes in a format of its own (a trace as NumPy arrays, a
/// model's state as a state file).
public protocol SavableHostObject: HostObject {
    /// Writes the object to `path`, blocking work on a thread of its own; throws a `LumenError`
    /// naming what is wrong.
    func save(to path: String, context: Builtin.Context) async throws
}

/// Named arrays written as NumPy writes them: one as `.npy`, several as `.npz`.
public enum NumPyOutput {
    /// One named array.
    public typealias Array = (name: String, values: TensorValues, shape: [Int])

    /// Whether `path` names an `.npz` archive (else an `.npy` file); any other ending is an error.
    public static func isArchive(_ path: String, at location: SourceLocation) throws(LumenError) -> Bool {
        guard path.hasSuffix(".npz") || path.hasSuffix(".npy") else {
            throw LumenError(.value, "path \(path.debugDescription) must end in .npy (one Tensor) or .npz (several)", at: location)
        }
        return path.hasSuffix(".npz")
    }

    /// Writes `arrays` to `path`: an `.npz` archive of them, or the one array as `.npy`.
    public static func write(_ arrays: [Array], to path: String, at location: SourceLocation) async throws(LumenError) {
        let archive = try isArchive(path, at: location)
        guard archive || arrays.count == 1 else { throw LumenError(.value, "several tensors need an .npz path", at: location) }
        let data: Data
        do {
            data = archive ? try NumPyArchive.encode(arrays) : NumPyFile.encode(arrays[0].values, shape: arrays[0].shape)
        } catch {
            throw LumenError(.value, "cannot write \(path): \(error)", at: location)
        }
        // Writing is blocking work: it runs on a thread of its own, which hands back why it failed.
        let failure = await DedicatedThread.run(name: "lumen-save") { () -> String? in
            do { try data.write(to: URL(fileURLWithPath: path)) } catch { return error.localizedDescription }
            return nil
        }
        if let failure { throw LumenError(.value, "cannot write \(path): \(failure)", at: location) }
    }
}

import ArgumentParser
import Executors
import Foundation
import Inference
import RunLog

/// llama.cpp's control-vector options, shared by `lumen generate` and `lumen chat`: the vectors
/// given are summed, each with its scale, and added to the residual stream after each block of
/// the layer range (all blocks by default).
struct ControlVectorArguments: ParsableArguments {
    @Option(name: .customLong("control-vector"), help: ArgumentHelp("Add a control vector (a control-vector GGUF, as llama-cvector-generator writes); repeatable.", valueName: "file"))
    var unscaled: [String] = []

    @Option(name: .customLong("control-vector-scaled"), parsing: .upToNextOption,
            help: ArgumentHelp("Add a control vector times a scale; repeatable. Give it after MODEL and PROMPT.", valueName: "file scale"))
    var scaled: [String] = []

    @Option(name: .customLong("control-vector-layer-range"), parsing: .upToNextOption,
            help: ArgumentHelp("The first and last block (inclusive, from 0) the control vectors are added after (default: all).", valueName: "start end"))
    var layerRange: [Int] = []

    /// Each scaled file with its scale, or nil when the values are not file-scale pairs.
    private var scaledFiles: [(file: String, scale: Float)]? {
        guard scaled.count.isMultiple(of: 2) else { return nil }
        var pairs: [(file: String, scale: Float)] = []
        for index in stride(from: 0, to: scaled.count, by: 2) {
            guard let scale = Float(scaled[index + 1]), scale.isFinite else { return nil }
            pairs.append((scaled[index], scale))
        }
        return pairs
    }

    func validate() throws {
        if scaledFiles == nil {
            throw ValidationError("--control-vector-scaled takes a file and a scale each time, got \(scaled.joined(separator: " "))")
        }
        if !layerRange.isEmpty && (layerRange.count != 2 || layerRange[0] < 0 || layerRange[0] > layerRange[1]) {
            throw ValidationError("--control-vector-layer-range takes a first and a last block, 0 ≤ first ≤ last, got \(layerRange.map(String.init).joined(separator: " "))")
        }
    }

    /// The files with their scales, in the order given.
    private var files: [(path: String, scale: Float)] {
        unscaled.map { (path: $0, scale: Float(1)) } + (scaledFiles ?? []).map { (path: $0.file, scale: $0.scale) }
    }

    /// What the run log keeps of these options (nil when no vector is given): each file's
    /// absolute path, so `replay` finds it from anywhere, and its scale as written (0.1, not
    /// 0.100000001).
    var logged: RunSteering? {
        files.isEmpty ? nil : RunSteering(vectors: files.map { file in
            RunSteering.Vector(path: URL(fileURLWithPath: file.path).standardizedFileURL.path, scale: Double("\(file.scale)") ?? Double(file.scale))
        }, blocks: layerRange.isEmpty ? nil : layerRange)
    }

    /// `hooks(for:)` on a thread of its own: reading the files blocks.
    func readHooks(for model: LanguageModel) async throws -> [any ForwardHook] {
        let arguments = self
        return try await DedicatedThread.run(name: "lumen-control-vectors") { () throws -> [any ForwardHook] in try arguments.hooks(for: model) }
    }

    /// The hook adding the vectors to `model`'s forward passes; none when no vector is given.
    /// Reads the files, so it blocks: `readHooks` calls it off the cooperative pool, `lumen serve`
    /// on the thread that loads its models.
    func hooks(for model: LanguageModel) throws -> [any ForwardHook] {
        if layerRange.count == 2, layerRange[1] >= model.configuration.blockCount {
            throw CommandError("--control-vector-layer-range: block \(layerRange[1]) is past the model's last block, \(model.configuration.blockCount - 1)")
        }
        let vector: ControlVector?
        do { vector = try ControlVector.sum(of: files, for: model) } catch { throw CommandError(error.description) }
        return vector.map { [$0.steering(blocks: layerRange.count == 2 ? layerRange[0]...layerRange[1] : nil)] } ?? []
    }
}

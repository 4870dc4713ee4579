import ArgumentParser
import Inference

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

    /// The hook adding the vectors to `model`'s forward passes; none when no vector is given.
    func hooks(for model: LanguageModel) throws -> [any ForwardHook] {
        let files = unscaled.map { (file: $0, scale: Float(1)) } + (scaledFiles ?? [])
        guard !files.isEmpty else { return [] }
        let blocks = model.configuration.blockCount, width = model.configuration.embeddingLength
        var sum: ControlVector?
        for (file, scale) in files {
            let vector: ControlVector
            do { vector = try ControlVector(contentsOf: file) } catch { throw CommandError(error.description) }
            guard vector.width == width else {
                throw CommandError("\(file): its directions have \(vector.width) values, but the model's residual stream has \(width)")
            }
            if let beyond = vector.directions.keys.filter({ $0 >= blocks }).min() {
                throw CommandError("\(file): it has a direction for block \(beyond), but the model has \(blocks) blocks (0…\(blocks - 1))")
            }
            sum = sum.map { $0 + vector.scaled(by: scale) } ?? vector.scaled(by: scale)
        }
        if layerRange.count == 2, layerRange[1] >= blocks {
            throw CommandError("--control-vector-layer-range: block \(layerRange[1]) is past the model's last block, \(blocks - 1)")
        }
        return sum.map { [$0.steering(blocks: layerRange.count == 2 ? layerRange[0]...layerRange[1] : nil)] } ?? []
    }
}

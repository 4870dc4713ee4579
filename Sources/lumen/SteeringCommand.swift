import ArgumentParser
import Foundation
import Inference
import LumenKit

/// `lumen steering MODEL --positive TEXT… --negative TEXT… -o FILE.gguf`: a contrastive steering
/// vector in llama.cpp's control-vector format, for `--control-vector` (Lumen's or llama.cpp's).
struct SteeringCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "steering",
        abstract: "Write a contrastive steering vector (llama.cpp's control-vector GGUF) from positive and negative prompts.",
        discussion: """
            For each block after the first: the mean over the positive prompts of the residual \
            stream after the block at the prompt's last token, minus the same over the negative \
            ones (--method last); or, as llama-cvector-generator, the mean or the first principal \
            direction of the differences at every position of each positive–negative pair, unit \
            length (--method mean, pca). Use it with --control-vector-scaled FILE SCALE.
            """
    )

    @ArgumentParser.Argument(help: "A GGUF model: a path, or a name found as load() finds it (LUMEN_MODEL_PATH, the model cache).")
    var model: String

    @Option(parsing: .upToNextOption, help: ArgumentHelp("Prompts showing the behaviour to steer toward.", valueName: "text"))
    var positive: [String] = []

    @Option(parsing: .upToNextOption, help: ArgumentHelp("Prompts showing its opposite.", valueName: "text"))
    var negative: [String] = []

    @Option(help: ArgumentHelp("How the directions are made: last (the default: the mean last-token difference, at the residual stream's scale), mean or pca (llama-cvector-generator's: prompts in pairs, the differences at every position averaged or their first principal direction, unit length).", valueName: "method"))
    var method: ContrastiveMethod = .last

    @Option(name: .customShort("o"), help: ArgumentHelp("The control-vector GGUF to write.", valueName: "file"))
    var output: String

    @Option(name: .customShort("t"), parsing: .unconditional, help: "Threads for matrix products.")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if positive.isEmpty || negative.isEmpty { throw ValidationError("give at least one --positive and one --negative prompt") }
        if let directory = OutputPath.missingDirectory(of: output) { throw ValidationError("-o \(output): directory \(directory) does not exist") }
        if threads < 1 { throw ValidationError("-t must be at least 1, got \(threads)") }
        if method != .last, positive.count != negative.count {
            throw ValidationError("--method \(method.rawValue) pairs --positive i with --negative i: give as many of each, not \(positive.count) and \(negative.count)")
        }
    }

    func run() async throws {
        _ = global.bootstrapLogging(label: "lumen.steering")
        let llama = try await WeightCache.shared.load(ModelLocator.resolve(model))
        // A cache as long as the longest prompt, not the model's whole context.
        let longest = (positive + negative).map { llama.tokenizer.encode($0).count }.max() ?? 1
        let container = ModelContainer(model: llama, settings: ModelContainer.Settings(contextLength: max(1, longest), threads: threads, sequencesPerSession: 1))
        let vector = try await container.withSession { session in
            try await ControlVector.contrastive(session: session, positive: positive, negative: negative, method: method)
        }
        do { try vector.write(to: output, modelHint: llama.configuration.architecture) } catch { throw CommandError(error.description) }
        FileHandle.standardError.write(Data("wrote \(output): \(vector.directions.count) directions of \(vector.width) values (blocks 1…\(llama.configuration.blockCount - 1))\n".utf8))
    }
}

extension ContrastiveMethod: ExpressibleByArgument {}

import ArgumentParser
import Foundation
import Inference
import Tensors

/// `lumen trace MODEL PROMPT -o DIR`: the prompt's residual stream and attention probabilities,
/// as NumPy files, for Python to read.
struct TraceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Run a prompt and write its residual stream and attention probabilities as NumPy files.",
        discussion: """
            Writes DIR/tokens.json (the prompt, its token ids and their text), DIR/resid.npy \
            (float32 [n_layer][n_tokens][n_embd]: the residual stream after each block, llama.cpp's \
            l_out) and DIR/attn.npy (float32 [n_layer][n_head][n_tokens][n_tokens]: each head's \
            attention probabilities, row = query, column = key).
            """
    )

    @ArgumentParser.Argument(help: "A GGUF model: a path, or a name found as load() finds it (LUMEN_MODEL_PATH, the model cache).")
    var model: String

    @ArgumentParser.Argument(help: "The prompt (BOS added, special tokens parsed, as generate does).")
    var prompt: String

    @Option(name: .customShort("o"), help: ArgumentHelp("The directory to write (created if missing).", valueName: "dir"))
    var output: String

    @Option(name: .customShort("t"), parsing: .unconditional, help: "Threads for matrix products.")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if threads < 1 { throw ValidationError("-t must be at least 1, got \(threads)") }
        if let directory = OutputPath.missingDirectory(of: output) { throw ValidationError("-o \(output): directory \(directory) does not exist") }
    }

    /// The most bytes a trace may hold (residual stream and attention together).
    static let largestTrace = 2 << 30

    /// What `tokens.json` holds.
    private struct Tokens: Encodable {
        let prompt: String
        let tokens: [Int32]
        let pieces: [String]
    }

    func run() async throws {
        _ = global.bootstrapLogging(label: "lumen.trace")
        let llama = try await WeightCache.shared.load(ModelLocator.resolve(model))
        let configuration = llama.configuration
        let tokens = llama.tokenizer.encode(prompt)
        guard !tokens.isEmpty else { throw CommandError("the prompt has no tokens") }
        let count = tokens.count
        let trace = ActivationTrace(points: [.blockOutput, .attentionProbabilities], blocks: Array(0..<configuration.blockCount), configuration: configuration)
        // What the trace holds, told before any work (the attention grows with the square of the prompt).
        let bytes = trace.bytes(tokens: count)
        guard bytes <= Self.largestTrace else {
            throw CommandError("a trace of \(count) tokens takes \(ActivationTrace.size(bytes)) (\(trace.cost(tokens: count))), more than the \(ActivationTrace.size(Self.largestTrace)) allowed: use a shorter prompt")
        }
        let lease = try await SessionPool(model: llama, contextLength: count, threads: threads).lease()
        defer { lease.release() }
        let session = lease.session
        guard session.contextLength == count else {
            throw CommandError("the prompt's \(count) tokens do not fit in the model's context of \(configuration.contextLength)")
        }
        let capture = trace.capture(tokens: count)
        _ = try await session.evaluate(tokens, hooks: [capture])
        let tensors = trace.tensors(from: capture, labels: [])
        guard let residual = tensors[.blockOutput], let attention = tensors[.attentionProbabilities] else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let files: [(String, Data)] = [
            ("tokens.json", try encoder.encode(Tokens(prompt: prompt, tokens: tokens, pieces: tokens.map { llama.tokenizer.decode([$0]) })) + Data("\n".utf8)),
            ("resid.npy", NumPyFile.encode(residual.values, shape: residual.shape)),
            ("attn.npy", NumPyFile.encode(attention.values, shape: attention.shape)),
        ]
        let directory = URL(fileURLWithPath: output)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for (name, data) in files { try data.write(to: directory.appendingPathComponent(name)) }
        } catch {
            throw CommandError("cannot write \(output): \(error.localizedDescription)")
        }
        FileHandle.standardError.write(Data("wrote \(output): \(count) tokens, \(configuration.blockCount) blocks, \(configuration.headCount) heads (\(ActivationTrace.size(bytes)))\n".utf8))
    }
}

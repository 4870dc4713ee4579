import ArgumentParser
import Foundation
import Inference
import LumenKit
import Tensors

/// `lumen trace MODEL PROMPT -o DIR [--points P,…] [--blocks A-B] [--positions LIST]`: the
/// prompt's activations at the hook points chosen, as NumPy files, for Python to read.
struct TraceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Run a prompt and write its activations at the points chosen as NumPy files.",
        discussion: """
            Writes DIR/tokens.json (the prompt, its token ids and their text) and DIR/<point>.npy \
            (float32) for each point, by TransformerLens' names: embed and ln_final [n_tokens][n_embd]; \
            resid_pre, resid_mid, resid_post, attn_out and mlp_out [n_blocks][n_tokens][n_embd]; q and z \
            [n_blocks][n_tokens][n_head][head_dim]; k and v [n_blocks][n_tokens][n_head_kv][head_dim]; \
            pattern [n_blocks][n_head][n_tokens][n_tokens] (row = query, column = key); mlp_pre and mlp_post \
            [n_blocks][n_tokens][n_ff]; logits [n_tokens][n_vocab] (n_blocks and n_tokens: those chosen). \
            The default is resid_post and pattern, also written as resid.npy and attn.npy. Each point may \
            take at most 2 GiB: --positions and --blocks make a point smaller.
            """
    )

    @ArgumentParser.Argument(help: "A GGUF model: a path, or a name found as load() finds it (LUMEN_MODEL_PATH, the model cache).")
    var model: String

    @ArgumentParser.Argument(help: "The prompt (BOS added, special tokens parsed, as generate does).")
    var prompt: String

    @Option(name: .customShort("o"), help: ArgumentHelp("The directory to write (created if missing).", valueName: "dir"))
    var output: String

    @Option(help: ArgumentHelp("The points to write, separated by commas (embed, resid_pre, q, k, v, z, pattern, attn_out, resid_mid, mlp_pre, mlp_post, mlp_out, resid_post, ln_final, logits).", valueName: "points"))
    var points = "resid_post,pattern"

    @Option(help: ArgumentHelp("The blocks: A-B (inclusive) or A,B,… (default: all).", valueName: "blocks"))
    var blocks: String?

    @Option(help: ArgumentHelp("The positions: A-B (inclusive) or A,B,…; negative counts from the end (default: all).", valueName: "positions"))
    var positions: String?

    @Option(name: .customShort("t"), parsing: .unconditional, help: "Threads for matrix products.")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @OptionGroup(title: "LoRA adapters") var lora: LoRAArguments

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if threads < 1 { throw ValidationError("-t must be at least 1, got \(threads)") }
        if let directory = OutputPath.missingDirectory(of: output) { throw ValidationError("-o \(output): directory \(directory) does not exist") }
        _ = try chosenPoints()
        if let blocks { _ = try Self.integers(blocks, option: "--blocks") }
        if let positions { _ = try Self.integers(positions, option: "--positions") }
    }

    /// The most bytes one point of a trace may hold.
    static let largestPoint = 2 << 30

    /// What `tokens.json` holds.
    private struct Tokens: Encodable {
        let prompt: String
        let tokens: [Int32]
        let pieces: [String]
    }

    /// `--points` as points, in the order given, each once.
    private func chosenPoints() throws -> [ActivationPoint] {
        var chosen: [ActivationPoint] = []
        for name in points.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            guard let point = ActivationPoint(name: name) else {
                throw ValidationError("--points: \(name.debugDescription) is not a point; the points are \(ActivationPoint.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if !chosen.contains(point) { chosen.append(point) }
        }
        guard !chosen.isEmpty else { throw ValidationError("--points names no point") }
        return chosen
    }

    /// `A-B` (inclusive; either end may be negative) or `A,B,…`, as ranges of unresolved ends.
    private static func integers(_ text: String, option: String) throws -> [(low: Int, high: Int)] {
        var ranges: [(low: Int, high: Int)] = []
        for part in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            // The dash of a range comes after the first character (which may be a minus sign).
            if let dash = part.dropFirst().firstIndex(of: "-"), let low = Int(part[..<dash]), let high = Int(part[part.index(after: dash)...]) {
                ranges.append((low, high))
            } else if let value = Int(part) {
                ranges.append((value, value))
            } else {
                throw ValidationError("\(option) \(part.debugDescription) is not a number or a range A-B")
            }
        }
        guard !ranges.isEmpty else { throw ValidationError("\(option) names nothing") }
        return ranges
    }

    /// `ranges` (ends negative from the end of `count`) as indices, each checked, ascending, once.
    private static func resolved(_ ranges: [(low: Int, high: Int)], count: Int, option: String, what: String) throws -> [Int] {
        func index(_ value: Int) throws -> Int {
            let index = value < 0 ? count + value : value
            guard (0..<count).contains(index) else { throw CommandError("\(option) \(value) is not one of the \(count) \(what) (0…\(count - 1), or -\(count)…-1)") }
            return index
        }
        var chosen = Set<Int>()
        for (low, high) in ranges {
            let (first, last) = (try index(low), try index(high))
            guard first <= last else { throw CommandError("\(option) \(low)-\(high) goes down: write it from the lower end") }
            chosen.formUnion(first...last)
        }
        return chosen.sorted()
    }

    func run() async throws {
        _ = global.bootstrapLogging(label: "lumen.trace")
        let llama = try await WeightCache.shared.load(ModelLocator.resolve(model))
        let configuration = llama.configuration
        let tokens = llama.tokenizer.encode(prompt)
        guard !tokens.isEmpty else { throw CommandError("the prompt has no tokens") }
        let count = tokens.count
        let chosen = try chosenPoints()
        let blockList = try blocks.map { try Self.resolved(Self.integers($0, option: "--blocks"), count: configuration.blockCount, option: "--blocks", what: "blocks") }
            ?? Array(0..<configuration.blockCount)
        let positionList = try positions.map { try Self.resolved(Self.integers($0, option: "--positions"), count: count, option: "--positions", what: "positions of the prompt") }
        let trace = ActivationTrace(points: chosen, blocks: blockList, positions: positionList, configuration: configuration)
        // What each point holds, told before any work (attention grows with the square of the prompt).
        for point in chosen where 4 * trace.floats(point, tokens: count) > Self.largestPoint {
            let perRow = 4 * trace.floats(point, tokens: count) / max(1, positionList?.count ?? count)
            let fitting = Self.largestPoint / max(1, perRow)
            throw CommandError("\(trace.cost(point, tokens: count)) is more than the \(ActivationTrace.size(Self.largestPoint)) a point may take: --positions with at most \(fitting) positions\(point.layout.perBlock ? ", or fewer --blocks," : "") fits it")
        }
        let container = ModelContainer(model: llama, settings: ModelContainer.Settings(contextLength: count, threads: threads, sequencesPerSession: 1,
                                                                                       adapters: try await lora.adapters(for: llama)))
        guard container.sessions.contextLength == count else {
            throw CommandError("the prompt's \(count) tokens do not fit in the model's context of \(configuration.contextLength)")
        }
        let capture = trace.capture(tokens: count)
        _ = try await container.withSession { session in try await session.evaluate(tokens, hooks: [capture]) }
        let pieces = tokens.map { llama.tokenizer.textPiece($0) }
        let tensors = trace.tensors(from: capture, labels: pieces)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var files: [(String, Tensor?)] = chosen.map { ($0.rawValue, tensors[$0]) }
        // The names earlier versions wrote, so that their scripts keep working.
        for (name, point) in [("resid", ActivationPoint.blockOutput), ("attn", .attentionProbabilities)] where chosen.contains(point) {
            files.append((name, tensors[point]))
        }
        let directory = URL(fileURLWithPath: output)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let listing = Tokens(prompt: prompt, tokens: tokens, pieces: pieces)
            try (try encoder.encode(listing) + Data("\n".utf8)).write(to: directory.appendingPathComponent("tokens.json"))
            for case let (name, tensor?) in files {
                try NumPyFile.encode(tensor.values, shape: tensor.shape).write(to: directory.appendingPathComponent(name + ".npy"))
            }
        } catch {
            throw CommandError("cannot write \(output): \(error.localizedDescription)")
        }
        let bytes = trace.bytes(tokens: count)
        FileHandle.standardError.write(Data("wrote \(output): \(count) tokens, \(chosen.map(\.rawValue).joined(separator: ", ")) at \(blockList.count) blocks (\(ActivationTrace.size(bytes)))\n".utf8))
    }
}

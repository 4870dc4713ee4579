import CPUBackend
import GGUF

/// A model architecture, as llama.cpp keeps one per `src/models/<arch>.cpp`: what it fixes in the
/// configuration (and, when it reads more of the file than every model's shape, a configuration
/// type of its own: `Gemma4Architecture.Configuration`), which tensors it reads, and its forward
/// pass, its stages computing through the session's `ComputeBackend`.
protocol ModelArchitecture: Sendable {
    /// Its `general.architecture` name.
    static var name: String { get }
    /// Sets what the architecture fixes (RoPE style, sliding windows, …) after the generic keys
    /// have been read.
    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError)
    /// Reads and checks the weights.
    init(weights: WeightLoader) throws(ModelError)
    /// Every matrix one generated token reads in full (the output included).
    var matrices: [Matrix] { get }
    /// The scratch buffers its forward pass uses beyond the state's common ones.
    var scratch: [ScratchNeed] { get }
    /// The token embedding (one row read per token).
    var tokenEmbedding: Matrix { get }
    /// The final norm and output matrix: residual-stream rows to logits.
    var unembedding: Unembedding { get }
    /// What `lumen info` shows of the architecture's own configuration (beside the shape every
    /// model has), as name–value lines.
    var details: [(name: String, value: String)] { get }
    /// Runs `tokens` at the sequences and positions `state` placed them (`placeRun`,
    /// `placeEach`), writing their keys and values into the KV cache, and writes the logits of the
    /// last token (or of every token, with `allLogits`) into `state.logits`.
    func forward(_ tokens: [Int32], state: InferenceState, allLogits: Bool)
}

extension ModelArchitecture {
    /// Most architectures read nothing of their own.
    var details: [(name: String, value: String)] { [] }
}

/// The architectures Lumen runs, by name: the one table of them.
enum Architectures {
    static let all: [any ModelArchitecture.Type] = [LlamaArchitecture.self, Qwen2Architecture.self, Qwen3Architecture.self,
                                                    Phi3Architecture.self, Gemma3Architecture.self, Gemma4Architecture.self, Qwen3MoEArchitecture.self,
                                                    SmolLM3Architecture.self, Qwen35Architecture.self,
                                                    Qwen35MoEArchitecture.self, GptOssArchitecture.self, LFM2Architecture.self,
                                                    LFM2MoEArchitecture.self, Olmo2Architecture.self]

    /// The architecture `general.architecture` names.
    static func named(_ name: String) -> (any ModelArchitecture.Type)? {
        all.first { $0.name == name }
    }

    /// The supported names, for messages.
    static var names: String { all.map { "\"\($0.name)\"" }.joined(separator: ", ") }
}

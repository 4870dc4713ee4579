import GGUF

/// How a text's hidden states (the final norm's output at each position) become one vector:
/// llama.cpp's `--pooling` types that a causal model can use. The raw value is the name users
/// meet in cells, on the command line and in the GGUF `<arch>.pooling_type` number's meaning.
public enum Pooling: String, Sendable, CaseIterable {
    /// The mean over every position.
    case mean
    /// The first position (for a model that adds one, the BOS token).
    case cls
    /// The last position: in a causal model, the only one that has seen the whole text.
    case last

    /// llama.cpp's number for the pooling type (`enum llama_pooling_type`).
    var number: Int {
        switch self {
        case .mean: 1
        case .cls: 2
        case .last: 3
        }
    }

    /// The pooling the model's file declares (`<arch>.pooling_type`), or nil when it declares
    /// none this list has (a generative model's files usually declare none).
    public static func declared(by model: LanguageModel) -> Pooling? {
        let number = model.gguf.metadata[model.configuration.architecture + ".pooling_type"]?.intValue
        return allCases.first { $0.number == number }
    }
}

extension ModelSession {
    /// The embedding of `tokens` (read from an empty cache, as `evaluate` does), as llama.cpp's
    /// `llama-embedding` computes it: each position's hidden state after the final norm,
    /// pooled, then scaled to unit Euclidean length when `normalized`; `hooks` change the
    /// forward pass first (a control vector).
    ///
    /// - Throws: `ModelError` when the tokens are empty or do not fit, a hook does not fit the
    ///   model, or the task is cancelled.
    public func embedding(_ tokens: [Int32], pooling: Pooling, normalized: Bool = true, hooks: [any ForwardHook] = []) throws(ModelError) -> [Float] {
        let c = model.configuration, width = c.embeddingLength, last = c.blockCount - 1
        let capture = ActivationCapture([.blockOutput], blocks: [last])
        _ = try evaluate(tokens, hooks: hooks + [capture])
        var rows = capture.take(.blockOutput, block: last)
        let chosen = switch pooling {
        case .mean: 0..<tokens.count
        case .cls: 0..<1
        case .last: (tokens.count - 1)..<tokens.count
        }
        var hidden = [Float](repeating: 0, count: chosen.count * width)
        rows.withUnsafeMutableBufferPointer { source in
            hidden.withUnsafeMutableBufferPointer { target in
                guard let source = source.baseAddress, let target = target.baseAddress else { return }
                model.architecture.unembedding.normalize(source + chosen.lowerBound * width, count: chosen.count, configuration: c, into: target, state: state)
            }
        }
        var pooled = [Float](repeating: 0, count: width)
        for row in 0..<chosen.count {
            for column in 0..<width { pooled[column] += hidden[row * width + column] }
        }
        let count = Float(chosen.count)
        pooled = pooled.map { $0 / count }
        guard normalized else { return pooled }
        let length = pooled.reduce(0) { $0 + Double($1) * Double($1) }.squareRoot()
        return length > 0 ? pooled.map { Float(Double($0) / length) } : pooled
    }
}

import Foundation

/// The answer to `/v1/embeddings`: a vector per input, in order.
public struct EmbeddingList: Codable, Sendable, Equatable {
    /// One input's vector.
    public struct Embedding: Codable, Sendable, Equatable {
        /// A vector as OpenAI sends it: numbers, or base64 of little-endian float32 bytes.
        public enum Vector: Codable, Sendable, Equatable {
            case floats([Float])
            case base64(String)

            /// `values` in `format` ("float" or "base64").
            public init(_ values: [Float], base64: Bool) {
                guard base64 else {
                    self = .floats(values)
                    return
                }
                self = .base64(values.map(\.bitPattern.littleEndian).withUnsafeBytes { Data($0) }.base64EncodedString())
            }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let text = try? container.decode(String.self) { self = .base64(text) } else { self = .floats(try container.decode([Float].self)) }
            }

            public func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                switch self {
                case .floats(let values): try container.encode(values)
                case .base64(let text): try container.encode(text)
                }
            }
        }

        /// "embedding".
        public var object = "embedding"
        /// The input's index.
        public var index: Int
        /// The vector.
        public var embedding: Vector

        /// Input `index`'s vector.
        public init(index: Int, embedding: Vector) {
            self.index = index
            self.embedding = embedding
        }
    }

    /// Tokens read.
    public struct Usage: Codable, Sendable, Equatable {
        /// Tokens in every input together.
        public var promptTokens: Int
        /// The same: embeddings generate nothing.
        public var totalTokens: Int

        /// `tokens` read.
        public init(tokens: Int) {
            promptTokens = tokens
            totalTokens = tokens
        }

        enum CodingKeys: String, CodingKey {
            case promptTokens = "prompt_tokens", totalTokens = "total_tokens"
        }
    }

    /// "list".
    public var object = "list"
    /// The vectors, in input order.
    public var data: [Embedding]
    /// The model's name.
    public var model: String
    /// Tokens read.
    public var usage: Usage

    /// An answer.
    public init(data: [Embedding], model: String, usage: Usage) {
        self.data = data
        self.model = model
        self.usage = usage
    }
}

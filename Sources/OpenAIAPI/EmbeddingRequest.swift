/// A request to `/v1/embeddings`: one vector per input text (or token list).
public struct EmbeddingRequest: Codable, Sendable, Equatable {
    /// What to embed: OpenAI accepts a string, an array of strings, an array of token ids, or an
    /// array of such arrays.
    public enum Input: Codable, Sendable, Equatable {
        /// Texts, each embedded on its own.
        case texts([String])
        /// Token id lists, each embedded on its own.
        case tokens([[Int]])

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                self = .texts([text])
            } else if let texts = try? container.decode([String].self) {
                self = .texts(texts)
            } else if let tokens = try? container.decode([Int].self) {
                self = .tokens([tokens])
            } else if let lists = try? container.decode([[Int]].self) {
                self = .tokens(lists)
            } else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "input must be a string, an array of strings, an array of token ids or an array of such arrays")
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .texts(let texts): try container.encode(texts)
            case .tokens(let lists): try container.encode(lists)
            }
        }

        /// The number of inputs.
        public var count: Int {
            switch self {
            case .texts(let texts): texts.count
            case .tokens(let lists): lists.count
            }
        }
    }

    /// The served model's name (optional for servers with one model).
    public var model: String?
    /// What to embed.
    public var input: Input
    /// "float" (the default) or "base64" (each vector's little-endian float32 bytes).
    public var encodingFormat: String?
    /// A shorter length to cut vectors to; not supported (refused unless it is the model's).
    public var dimensions: Int?
    /// The end user's identifier; accepted and ignored.
    public var user: String?

    /// A request.
    public init(model: String?, input: Input, encodingFormat: String? = nil) {
        self.model = model
        self.input = input
        self.encodingFormat = encodingFormat
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case model, input, encodingFormat = "encoding_format", dimensions, user
    }

    /// Every field this request knows; a server refuses others.
    public static let fieldNames = Set(CodingKeys.allCases.map(\.rawValue))
}

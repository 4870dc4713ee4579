/// The `logit_bias` field of a request, in either form llama-server reads: OpenAI's object from
/// token to bias (`{"15043": -100}`), or llama-server's list of pairs (`[[15043, -100]]`); a token
/// given as a string that is not a number is that text's tokens, each biased (llama-server's
/// extension), and `false` as a bias bans the token.
public struct LogitBiasField: Codable, Sendable, Equatable {
    /// A biased token: by id, or by text to tokenize.
    public enum Token: Sendable, Equatable {
        /// A token id.
        case id(Int)
        /// Text whose tokens are each biased.
        case text(String)
    }

    /// One entry: a token and its bias (−∞ for `false`).
    public struct Entry: Sendable, Equatable {
        /// The token.
        public var token: Token
        /// The amount added to its logit.
        public var bias: Double

        /// An entry.
        public init(token: Token, bias: Double) {
            self.token = token
            self.bias = bias
        }
    }

    /// The entries, in the request's order (the object's in its keys' sorted order).
    public var entries: [Entry]

    /// A field of these entries.
    public init(_ entries: [Entry]) {
        self.entries = entries
    }

    /// A bias as the JSON gives it: a number, or `false` (−∞); anything else is refused.
    private struct Bias: Decodable {
        let value: Double

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                guard !flag else {
                    throw DecodingError.dataCorruptedError(in: container, debugDescription: "a bias must be a number, or false to ban the token; got true")
                }
                value = -.infinity
            } else if let number = try? container.decode(Double.self) {
                value = number
            } else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "a bias must be a number, or false to ban the token")
            }
        }
    }

    /// One `[token, bias]` pair of the list form.
    private struct Pair: Decodable {
        let entry: Entry

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            guard container.count == 2 else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "each pair must be [token, bias], a token id or text and a number or false"))
            }
            let token: Token = if let id = try? container.decode(Int.self) { .id(id) } else { .text(try container.decode(String.self)) }
            entry = Entry(token: token, bias: try container.decode(Bias.self).value)
        }
    }

    /// Reads the list of pairs, or else the object.
    public init(from decoder: any Decoder) throws {
        if (try? decoder.unkeyedContainer()) != nil {
            entries = try decoder.singleValueContainer().decode([Pair].self).map(\.entry)
            return
        }
        let object = try decoder.singleValueContainer().decode([String: Bias].self)
        entries = object.sorted { $0.key < $1.key }.map { key, bias in
            Entry(token: Int(key).map(Token.id) ?? .text(key), bias: bias.value)
        }
    }

    /// Writes the object form (a text's key is the text, as llama-server reads it); a ban as `false`.
    public func encode(to encoder: any Encoder) throws {
        var object: [String: BiasValue] = [:]
        for entry in entries {
            let key = switch entry.token {
            case .id(let id): String(id)
            case .text(let text): text
            }
            object[key] = entry.bias == -.infinity ? .ban : .amount(entry.bias)
        }
        var container = encoder.singleValueContainer()
        try container.encode(object)
    }

    /// A bias as written: a number, or `false`.
    private enum BiasValue: Encodable {
        case amount(Double)
        case ban

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .amount(let value): try container.encode(value)
            case .ban: try container.encode(false)
            }
        }
    }
}

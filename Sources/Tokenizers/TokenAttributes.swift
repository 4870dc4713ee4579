/// What a token is, as llama.cpp's `llama_token_attr` says: its GGUF token type, refined by the
/// vocabulary's rules (end-of-turn tokens become control tokens, control tokens named "unused"
/// become unused, some tokens strip whitespace beside them when matched in text).
public struct TokenAttributes: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16

    /// Creates attributes from their bits.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let unknown = TokenAttributes(rawValue: 1 << 0)
    public static let unused = TokenAttributes(rawValue: 1 << 1)
    public static let normal = TokenAttributes(rawValue: 1 << 2)
    public static let control = TokenAttributes(rawValue: 1 << 3)
    public static let userDefined = TokenAttributes(rawValue: 1 << 4)
    public static let byte = TokenAttributes(rawValue: 1 << 5)
    /// Whitespace before the token is removed when it is matched in text.
    public static let leftStrip = TokenAttributes(rawValue: 1 << 7)
    /// Whitespace after the token is removed when it is matched in text.
    public static let rightStrip = TokenAttributes(rawValue: 1 << 8)

    /// Tokens hidden from text unless special tokens are shown.
    static let hidden: TokenAttributes = [.unknown, .control]
    /// Tokens matched in text before it is tokenized.
    static let special: TokenAttributes = [.unknown, .control, .userDefined]

    /// The attributes of a GGUF `tokenizer.ggml.token_type` value.
    init(ggufTokenType: Int) {
        switch ggufTokenType {
        case 1: self = .normal
        case 2: self = .unknown
        case 3: self = .control
        case 4: self = .userDefined
        case 5: self = .unused
        case 6: self = .byte
        default: self = []
        }
    }
}

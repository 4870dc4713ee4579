/// Why a multipart message from a socket was refused.
public enum WireError: Error, Equatable, CustomStringConvertible {
    /// No `<IDS|MSG>` frame separates the identities from the message.
    case missingDelimiter
    /// Fewer than the signature and four JSON frames follow the delimiter.
    case truncated(frameCount: Int)
    /// Signing is on and the signature frame is empty.
    case missingSignature
    /// The signature does not match the frames.
    case badSignature
    /// The signature was seen before.
    case replayed
    /// A frame is not the JSON it should be.
    case malformed(frame: String, detail: String)

    /// A short name for the kind of problem, used to log each kind once.
    public var kind: String {
        switch self {
        case .missingDelimiter: "missing delimiter"
        case .truncated: "truncated message"
        case .missingSignature: "missing signature"
        case .badSignature: "bad signature"
        case .replayed: "replayed signature"
        case .malformed(let frame, _): "malformed \(frame)"
        }
    }

    public var description: String {
        switch self {
        case .missingDelimiter: "no <IDS|MSG> delimiter frame"
        case .truncated(let count): "expected a signature and 4 JSON frames after the delimiter, got \(count) frames"
        case .missingSignature: "the message is not signed but the connection has a key"
        case .badSignature: "the signature does not match the message"
        case .replayed: "the signature was already used by an earlier message"
        case .malformed(let frame, let detail): "the \(frame) frame is invalid: \(detail)"
        }
    }
}

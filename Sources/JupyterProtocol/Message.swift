import Foundation

/// One Jupyter message, as carried by the wire protocol.
///
/// The content is kept as the JSON bytes that came off (or go onto) the wire, so each handler
/// decodes exactly the content type it expects with `decodeContent(_:)`.
public struct Message: Sendable {
    /// The routing identities that precede the `<IDS|MSG>` delimiter (the topic on IOPub).
    public var identities: [Data]
    /// This message's header.
    public var header: MessageHeader
    /// The header of the request this message answers, if any.
    public var parentHeader: MessageHeader?
    /// Free-form metadata.
    public var metadata: [String: JSONValue]
    /// The content as encoded JSON (always an object).
    public var content: Data
    /// Extra binary buffers.
    public var buffers: [Data]

    /// Creates a message from its parts; `content` must be the JSON encoding of an object.
    public init(
        identities: [Data] = [],
        header: MessageHeader,
        parentHeader: MessageHeader?,
        metadata: [String: JSONValue] = [:],
        content: Data,
        buffers: [Data] = []
    ) {
        self.identities = identities
        self.header = header
        self.parentHeader = parentHeader
        self.metadata = metadata
        self.content = content
        self.buffers = buffers
    }

    /// The message type from the header.
    public var messageType: String { header.messageType }

    /// Decodes the content as `type`.
    public func decodeContent<Content: Decodable>(_ type: Content.Type) throws -> Content {
        try JSONDecoder().decode(type, from: content)
    }
}

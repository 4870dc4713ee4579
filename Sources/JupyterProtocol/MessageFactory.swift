import Foundation

/// Makes outgoing messages for one kernel session: fresh ids, the session id, the current time
/// and the protocol version in every header.
public struct MessageFactory: Sendable {
    /// The messaging protocol version Lumen speaks.
    public static let protocolVersion = "5.4"

    /// This kernel session's id, the same in every header it sends.
    public let session: String
    /// The user name put in headers.
    public let username: String

    /// Creates a factory for a new session.
    public init(session: String = UUID().uuidString.lowercased(), username: String = "lumen") {
        self.session = session
        self.username = username
    }

    /// A new header of `type`.
    public func header(_ type: String) -> MessageHeader {
        MessageHeader(
            messageID: UUID().uuidString.lowercased(),
            session: session,
            username: username,
            date: Date.now.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
            messageType: type,
            version: Self.protocolVersion
        )
    }

    /// A message of `type` carrying `content`, in answer to `parent` if given.
    public func message(
        _ type: String,
        content: some Encodable,
        parent: MessageHeader?,
        identities: [Data] = [],
        metadata: [String: JSONValue] = [:]
    ) throws -> Message {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return Message(
            identities: identities,
            header: header(type),
            parentHeader: parent,
            metadata: metadata,
            content: try encoder.encode(content)
        )
    }
}

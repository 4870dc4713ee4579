import Foundation
import Synchronization

/// Turns multipart ZeroMQ frames into `Message`s and back, as the Jupyter wire protocol lays them
/// out: identities, `<IDS|MSG>`, HMAC signature, header, parent header, metadata, content, buffers.
///
/// The signature is checked (in constant time) and the replay window consulted before any JSON is
/// parsed. Safe to share between threads.
public final class WireCodec: Sendable {
    /// The frame separating routing identities from the message.
    public static let delimiter = Data("<IDS|MSG>".utf8)

    private let signer: MessageSigner
    private let replayGuard: Mutex<ReplayGuard>

    /// Creates a codec signing with `key` (empty: no signing) and refusing replays among the last
    /// `replayWindow` signatures.
    public init(key: String, replayWindow: Int = 16_384) {
        signer = MessageSigner(key: key)
        replayGuard = Mutex(ReplayGuard(capacity: replayWindow))
    }

    /// Decodes and authenticates one multipart message.
    public func decode(_ frames: [Data]) throws(WireError) -> Message {
        guard let delimiterIndex = frames.firstIndex(of: Self.delimiter) else { throw .missingDelimiter }
        let body = frames[(delimiterIndex + 1)...]
        guard body.count >= 5 else { throw .truncated(frameCount: body.count) }
        let signature = body[body.startIndex]
        let signed = Array(body[(body.startIndex + 1)..<(body.startIndex + 5)])
        if signer.isSigning {
            guard !signature.isEmpty else { throw .missingSignature }
            guard signer.isValid(signature: signature, for: signed) else { throw .badSignature }
            let admitted = replayGuard.withLock { $0.admit(String(decoding: signature, as: UTF8.self)) }
            guard admitted else { throw .replayed }
        }
        let decoder = JSONDecoder()
        let header: MessageHeader
        do {
            header = try decoder.decode(MessageHeader.self, from: signed[0])
        } catch {
            throw .malformed(frame: "header", detail: Self.explain(error))
        }
        let parent: [String: JSONValue]
        let metadata: [String: JSONValue]
        do {
            parent = try decoder.decode([String: JSONValue].self, from: signed[1])
        } catch {
            throw .malformed(frame: "parent header", detail: Self.explain(error))
        }
        do {
            metadata = try decoder.decode([String: JSONValue].self, from: signed[2])
        } catch {
            throw .malformed(frame: "metadata", detail: Self.explain(error))
        }
        do {
            _ = try decoder.decode([String: JSONValue].self, from: signed[3])
        } catch {
            throw .malformed(frame: "content", detail: Self.explain(error))
        }
        return Message(
            identities: Array(frames[..<delimiterIndex]),
            header: header,
            parentHeader: parent.isEmpty ? nil : try? decoder.decode(MessageHeader.self, from: signed[1]),
            metadata: metadata,
            content: signed[3],
            buffers: Array(body.dropFirst(5))
        )
    }

    /// Encodes and signs `message` as multipart frames.
    public func encode(_ message: Message) throws -> [Data] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let signed = [
            try encoder.encode(message.header),
            try message.parentHeader.map { try encoder.encode($0) } ?? Data("{}".utf8),
            try encoder.encode(message.metadata),
            message.content,
        ]
        return message.identities + [Self.delimiter, Data(signer.signature(of: signed).utf8)] + signed + message.buffers
    }

    private static func explain(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "missing field '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "wrong type at '\(context.codingPath.map(\.stringValue).joined(separator: "."))'"
        case DecodingError.dataCorrupted: "not a JSON object"
        default: "\(error)"
        }
    }
}

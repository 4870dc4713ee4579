import Crypto
import Foundation

/// Signs and verifies messages with HMAC-SHA256 over the header, parent header, metadata and
/// content frames, as the Jupyter wire protocol specifies. An empty key disables signing.
public struct MessageSigner: Sendable {
    // Raw key bytes: swift-crypto's SymmetricKey is not Sendable, so it is made per message.
    private let key: [UInt8]?

    /// The only signature scheme Lumen accepts.
    public static let supportedScheme = "hmac-sha256"

    /// Creates a signer for `key`; an empty key means messages are neither signed nor checked.
    public init(key: String) {
        self.key = key.isEmpty ? nil : Array(key.utf8)
    }

    /// Whether messages are signed at all.
    public var isSigning: Bool { key != nil }

    /// The lowercase hex signature of `frames`, or an empty string when signing is off.
    public func signature(of frames: [Data]) -> String {
        guard let code = authenticationCode(of: frames) else { return "" }
        return code.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// Whether `signature` is the hex signature of `frames`, compared in constant time.
    /// With signing off every signature is accepted.
    public func isValid(signature: Data, for frames: [Data]) -> Bool {
        guard let expected = authenticationCode(of: frames) else { return true }
        guard let received = Self.decodeHex(signature), received.count == expected.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(expected, received) { difference |= left ^ right }
        return difference == 0
    }

    private func authenticationCode(of frames: [Data]) -> [UInt8]? {
        guard let key else { return nil }
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: key))
        for frame in frames { hmac.update(data: frame) }
        return Array(hmac.finalize())
    }

    private static func decodeHex(_ text: Data) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var high: UInt8?
        for character in text {
            guard let nibble = hexValue(character) else { return nil }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }

    private static func hexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

import Foundation
import Testing
@testable import JupyterProtocol

@Suite("Wire codec")
struct WireCodecTests {
    let factory = MessageFactory(session: "session-1", username: "tester")

    func sample(identities: [Data] = [Data("client-a".utf8)], buffers: [Data] = []) throws -> Message {
        var message = try factory.message(
            "execute_request", content: ExecuteRequest(code: "print(1)"),
            parent: factory.header("kernel_info_request"), identities: identities,
            metadata: ["tag": .string("x")]
        )
        message.buffers = buffers
        return message
    }

    @Test("a signed message decodes to what was encoded")
    func roundTrip() throws {
        let codec = WireCodec(key: "secret")
        let message = try sample(buffers: [Data([0, 1, 2])])
        let decoded = try codec.decode(try codec.encode(message))
        #expect(decoded.identities == message.identities)
        #expect(decoded.header == message.header)
        #expect(decoded.parentHeader == message.parentHeader)
        #expect(decoded.metadata == message.metadata)
        #expect(decoded.buffers == [Data([0, 1, 2])])
        #expect(try decoded.decodeContent(ExecuteRequest.self).code == "print(1)")
    }

    @Test("an empty parent header decodes as none")
    func emptyParent() throws {
        let codec = WireCodec(key: "")
        let message = try factory.message("status", content: StatusContent(executionState: "idle"), parent: nil)
        let frames = try codec.encode(message)
        #expect(frames[frames.firstIndex(of: WireCodec.delimiter)! + 3] == Data("{}".utf8))
        #expect(try codec.decode(frames).parentHeader == nil)
    }

    @Test("tampering with any signed frame breaks the signature")
    func tampering() throws {
        let codec = WireCodec(key: "secret")
        let frames = try codec.encode(try sample())
        let delimiter = try #require(frames.firstIndex(of: WireCodec.delimiter))
        for offset in 2...5 {
            var tampered = frames
            tampered[delimiter + offset].append(contentsOf: Data(" ".utf8))
            #expect(throws: WireError.badSignature) { try WireCodec(key: "secret").decode(tampered) }
        }
        #expect(throws: WireError.badSignature) { try WireCodec(key: "other").decode(frames) }
    }

    @Test("a missing signature is refused when there is a key, accepted when there is none")
    func missingSignature() throws {
        let unsigned = try WireCodec(key: "").encode(try sample())
        #expect(throws: WireError.missingSignature) { try WireCodec(key: "secret").decode(unsigned) }
        #expect(try WireCodec(key: "").decode(unsigned).header.messageType == "execute_request")
    }

    @Test("a replayed signature is refused")
    func replay() throws {
        let codec = WireCodec(key: "secret")
        let frames = try codec.encode(try sample())
        _ = try codec.decode(frames)
        #expect(throws: WireError.replayed) { try codec.decode(frames) }
    }

    @Test("malformed multipart messages are refused with the reason")
    func malformed() throws {
        let codec = WireCodec(key: "")
        let delimiter = WireCodec.delimiter
        #expect(throws: WireError.missingDelimiter) { try codec.decode([Data("junk".utf8)]) }
        #expect(throws: WireError.truncated(frameCount: 2)) { try codec.decode([delimiter, Data(), Data("{}".utf8)]) }
        let empty = Data("{}".utf8)
        let cases: [([Data], String)] = [
            ([Data("{not json".utf8), empty, empty, empty], "header"),
            ([Data(#"{"msg_id": "1"}"#.utf8), empty, empty, empty], "header"),
            ([Data(#"{"msg_id": 5, "msg_type": "x"}"#.utf8), empty, empty, empty], "header"),
            ([Data(#"{"msg_id": "1", "msg_type": "x"}"#.utf8), Data("[]".utf8), empty, empty], "parent header"),
            ([Data(#"{"msg_id": "1", "msg_type": "x"}"#.utf8), empty, Data("7".utf8), empty], "metadata"),
            ([Data(#"{"msg_id": "1", "msg_type": "x"}"#.utf8), empty, empty, Data("[1]".utf8)], "content"),
        ]
        for (frames, frame) in cases {
            do {
                _ = try codec.decode([delimiter, Data()] + frames)
                Issue.record("accepted a malformed \(frame)")
            } catch {
                guard case .malformed(let reported, _) = error else {
                    Issue.record("wrong error \(error)")
                    continue
                }
                #expect(reported == frame)
            }
        }
    }
}

@Suite("Signing and replay")
struct SigningTests {
    @Test("HMAC-SHA256 over the frames matches RFC 4231 test case 2")
    func knownAnswer() {
        let signer = MessageSigner(key: "Jefe")
        let frames = ["what do ya ", "want ", "for ", "nothing?"].map { Data($0.utf8) }
        #expect(signer.signature(of: frames) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test("verification accepts upper-case hex and refuses wrong lengths and non-hex")
    func verification() {
        let signer = MessageSigner(key: "k")
        let frames = [Data("a".utf8)]
        let signature = signer.signature(of: frames)
        #expect(signer.isValid(signature: Data(signature.utf8), for: frames))
        #expect(signer.isValid(signature: Data(signature.uppercased().utf8), for: frames))
        #expect(!signer.isValid(signature: Data(signature.dropLast(2).utf8), for: frames))
        #expect(!signer.isValid(signature: Data(("zz" + signature.dropFirst(2)).utf8), for: frames))
    }

    @Test("an empty key signs nothing")
    func emptyKey() {
        let signer = MessageSigner(key: "")
        #expect(!signer.isSigning)
        #expect(signer.signature(of: [Data("a".utf8)]) == "")
    }

    @Test("the replay guard forgets the oldest signature when full")
    func replayWindow() {
        var guardian = ReplayGuard(capacity: 2)
        let admitted = ["a", "b", "a", "c", "a", "c"].map { guardian.admit($0) }
        #expect(admitted == [true, true, false, true, true, false])
    }
}

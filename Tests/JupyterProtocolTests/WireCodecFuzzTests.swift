import Foundation
import FuzzSupport
import JupyterProtocol
import Testing

@Suite("Fuzzing the wire codec")
struct WireCodecFuzzTests {
    @Test("20,000 messages with a mutated frame decode or are refused with a WireError, never a crash", .timeLimit(.minutes(10)))
    func mutatedFrames() throws {
        let factory = MessageFactory()
        let message = try factory.message(
            "execute_request", content: ExecuteRequest(code: "print(1)"), parent: factory.header("kernel_info_request"),
            identities: [Data("client".utf8)], metadata: ["cellId": .string("abc")]
        )
        // Unsigned, so every mutant reaches the JSON decoding rather than the signature check.
        let frames = try WireCodec(key: "").encode(message)
        var mutator = SeededMutator(
            seeds: frames.map { Array($0) },
            dictionary: ["<IDS|MSG>", "\"header\"", "\"msg_id\"", "\"msg_type\"", "{", "}", "[", "]", "null", "\"\\u0000\"", "\\ud800", "1e999", "-0"]
        )
        var decoded = 0
        var refused = 0
        for iteration in 0..<20_000 {
            var mutated = frames
            mutated[iteration % frames.count] = Data(mutator.nextInput())
            do {
                _ = try WireCodec(key: "").decode(mutated)
                decoded += 1
            } catch {
                refused += 1
            }
        }
        // Both paths were reached: the mutants were neither all valid nor all rejected at once.
        #expect(decoded > 0 && refused > 0)
    }
}

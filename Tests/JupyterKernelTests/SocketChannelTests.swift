import Evaluation
import Foundation
import JupyterProtocol
import Testing
import ZeroMQ
@testable import JupyterKernel

@Suite("Socket channels")
struct SocketChannelTests {
    @Test("messages arrive in order and a mark, naming the shell that asked for it, follows everything queued before it")
    func orderAndMark() async throws {
        let context = try Context()
        let channel = try await SocketChannel.open(name: "shell", context: context, type: .router, endpoint: "inproc://order", mode: .receive)
        let client = try Socket(context: context, type: .dealer)
        try client.setRoutingID(Array("client".utf8))
        try client.connect("inproc://order")
        for index in 0..<3 { try client.send([[UInt8(index)]]) }
        channel.requestMark(for: "subshell")
        var received: [[UInt8]] = []
        for await event in channel.events {
            switch event {
            case .message(let frames):
                #expect(frames.first == Array("client".utf8))
                received.append(frames[1])
            case .mark(let shell):
                #expect(shell == "subshell")
                #expect(received == [[0], [1], [2]])
                channel.send([Array("client".utf8), [42]])
                #expect(try client.receive() == [[42]])
                await channel.close()
                return
            }
        }
        Issue.record("the stream ended without a mark")
    }

    @Test("an echo channel sends each message straight back")
    func echo() async throws {
        let context = try Context()
        let channel = try await SocketChannel.open(name: "heartbeat", context: context, type: .reply, endpoint: "inproc://echo", mode: .echo)
        let client = try Socket(context: context, type: .request)
        try client.connect("inproc://echo")
        try client.send([Array("ping".utf8)])
        #expect(try client.receive() == [Array("ping".utf8)])
        await channel.close()
    }

    @Test("a bind failure is reported by open, naming the channel")
    func bindFailure() async throws {
        let context = try Context()
        await #expect {
            _ = try await SocketChannel.open(name: "control", context: context, type: .router, endpoint: "tcp://256.0.0.1:1", mode: .receive)
        } throws: { error in
            "\(error)".contains("control")
        }
    }
}

@Suite("Output on the wire")
struct JupyterOutputSinkTests {
    @Test("JSON MIME types are embedded as JSON, others as strings")
    func wireData() {
        let data = JupyterOutputSink.wireData(MIMEBundle([
            "text/plain": "{\"a\": 1}",
            "application/json": "{\"a\": 1}",
            "application/vnd.custom+json": "[true]",
        ]))
        #expect(data["text/plain"] == .string("{\"a\": 1}"))
        #expect(data["application/json"] == .object(["a": .int(1)]))
        #expect(data["application/vnd.custom+json"] == .array([.bool(true)]))
    }
}

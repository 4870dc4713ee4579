import Foundation
import Testing
@testable import ZeroMQ

@Suite("ZeroMQ wrapper")
struct SocketTests {
    /// A bound and a connected PAIR socket on `endpoint`.
    func connectedPair(_ endpoint: String) throws -> (server: Socket, client: Socket) {
        let context = try Context()
        let server = try Socket(context: context, type: .pair)
        try server.bind(endpoint)
        let client = try Socket(context: context, type: .pair)
        try client.connect(endpoint)
        return (server, client)
    }

    @Test("multipart messages, empty frames included, cross an inproc pair intact")
    func multipart() throws {
        let (server, client) = try connectedPair("inproc://multipart")
        #expect(try server.receive(blocking: false) == nil)
        let frames: [[UInt8]] = [[1, 2, 3], [], Array("text".utf8)]
        try client.send(frames)
        #expect(try server.receive() == frames)
    }

    @Test("the poller reports readable sockets and file descriptors")
    func poll() throws {
        let (server, client) = try connectedPair("inproc://poll")
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { descriptors.forEach { close($0) } }
        var poller = Poller([.socket(server), .fileDescriptor(descriptors[0])])
        #expect(try poller.wait(timeoutMilliseconds: 0) == [false, false])
        try client.send([[7]])
        #expect(try poller.wait(timeoutMilliseconds: 1000) == [true, false])
        var byte: UInt8 = 1
        _ = write(descriptors[1], &byte, 1)
        #expect(try poller.wait(timeoutMilliseconds: 1000) == [true, true])
    }

    @Test("binding a bad endpoint names it in the error")
    func badEndpoint() throws {
        let socket = try Socket(context: try Context(), type: .router)
        #expect {
            try socket.bind("nonsense://here")
        } throws: { error in
            "\(error)".contains("nonsense://here")
        }
    }

    @Test("a wildcard port resolves to a concrete endpoint")
    func wildcard() throws {
        let socket = try Socket(context: try Context(), type: .router)
        try socket.bind("tcp://127.0.0.1:*")
        let endpoint = try socket.lastEndpoint()
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:") && !endpoint.hasSuffix(":*"))
    }
}

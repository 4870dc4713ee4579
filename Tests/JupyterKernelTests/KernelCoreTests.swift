import Evaluation
import Foundation
import JupyterProtocol
import Logging
import Synchronization
import Testing
@testable import JupyterKernel

/// A transport that keeps what the core sends, in order, and counts the marks it asks for.
final class MemoryTransport: MessageTransport {
    let name: String
    private let sent = Mutex<[[[UInt8]]]>([])
    private let marks = Mutex<[String?]>([])
    /// Each message as it is sent.
    let sending: AsyncStream<[[UInt8]]>
    private let sendingContinuation: AsyncStream<[[UInt8]]>.Continuation

    init(name: String) {
        self.name = name
        (sending, sendingContinuation) = AsyncStream.makeStream(of: [[UInt8]].self)
    }

    func send(_ frames: [[UInt8]]) {
        sent.withLock { $0.append(frames) }
        sendingContinuation.yield(frames)
    }

    func requestMark(for shell: String?) {
        marks.withLock { $0.append(shell) }
    }

    /// The shells marks were asked for, in order.
    var markedShells: [String?] { marks.withLock { $0 } }

    /// How many marks were asked for.
    var markRequests: Int { marks.withLock { $0.count } }

    /// What was sent, decoded (a codec of the test's own, so the kernel's replay guard is not shared).
    func messages(key: String) throws -> [Message] {
        let codec = WireCodec(key: key)
        return try sent.withLock { $0 }.map { try codec.decode($0.map { Data($0) }) }
    }
}

/// An evaluator whose cells do what their code names: `print` writes a line, `fail` fails,
/// `wait` announces it started and waits until it is cancelled. It keeps the comm messages it
/// receives and answers each on the same comm.
final class ScriptedEvaluator: Evaluator {
    let started: AsyncStream<Void>
    private let startedContinuation: AsyncStream<Void>.Continuation
    let comms = Mutex<[CommMessage]>([])

    init() {
        (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
    }

    func execute(_ request: ExecutionRequest, output: any OutputSink) async throws(ExecutionError) {
        switch request.code {
        case "print":
            output.stream(.stdout, "printed\n")
        case "fail":
            throw ExecutionError(name: "ValueError", message: "failed on purpose", traceback: ["ValueError: failed on purpose"])
        case "wait":
            startedContinuation.yield()
            do {
                try await Task.sleep(for: .seconds(3600))
            } catch {
                throw .interrupted
            }
        default:
            break
        }
    }

    func complete(_ code: String, cursor: Int) async -> Completion { Completion(matches: [], start: cursor, end: cursor) }
    func inspect(_ code: String, cursor: Int, detailLevel: Int) async -> MIMEBundle? { nil }
    func completeness(of code: String) async -> Completeness { .complete }
    func history(_ query: HistoryQuery) async -> [HistoryEntry] { [] }

    func receive(_ message: CommMessage, output: any OutputSink) async {
        comms.withLock { $0.append(message) }
        output.comm(CommMessage(.message, commID: message.commID, data: #"{"answer":1}"#))
    }

    func openComms(target: String?) async -> [String: String] { ["one": "jupyter.widget"] }
}

/// The kernel core driven through in-memory transports: what it publishes and replies, in order,
/// with no socket involved.
@Suite("Kernel core")
struct KernelCoreTests {
    static let key = "a0436f6c-1916-498b-8eb9-e81ab9368e84"

    let shell = MemoryTransport(name: "shell")
    let control = MemoryTransport(name: "control")
    let iopub = MemoryTransport(name: "iopub")
    let evaluator = ScriptedEvaluator()
    let client = MessageFactory(session: "client-session", username: "tester")
    let core: KernelCore

    init() {
        let codec = WireCodec(key: Self.key)
        let factory = MessageFactory()
        let logger = Logger(label: "test")
        let info = KernelInfoReply(
            protocolVersion: "5.4", implementation: "test", implementationVersion: "0",
            languageInfo: .init(name: "test", version: "0", mimetype: "text/plain", fileExtension: ".txt", pygmentsLexer: "text", codemirrorMode: "text"),
            banner: "", helpLinks: []
        )
        core = KernelCore(
            evaluator: evaluator, shell: shell, info: info, codec: codec, factory: factory,
            iopub: IOPubPublisher(channel: iopub, codec: codec, factory: factory, logger: logger),
            stdin: StdinBridge(channel: MemoryTransport(name: "stdin"), codec: codec, factory: factory),
            logger: logger, shutdownRequests: AsyncStream.makeStream(of: Bool.self).continuation
        )
    }

    /// A request as a client sends it, signed with the connection's key.
    func request(_ type: String, _ content: some Encodable, subshell: String? = nil) throws -> (message: Message, frames: [[UInt8]]) {
        var message = try client.message(type, content: content, parent: nil, identities: [Data("client".utf8)])
        message.header.subshellID = subshell
        return (message, try WireCodec(key: Self.key).encode(message).map { Array($0) })
    }

    func execute(_ code: String, on channel: MemoryTransport? = nil, stopOnError: Bool = true) async throws -> Message {
        let (message, frames) = try request("execute_request", ExecuteRequest(code: code, stopOnError: stopOnError))
        let transport = channel ?? shell
        await core.serve(.message(frames), from: transport, as: transport === control ? .control : .shell)
        return message
    }

    /// The replies on `channel` to `request`, decoded.
    func replies(on channel: MemoryTransport, to request: Message) throws -> [Message] {
        try channel.messages(key: Self.key).filter { $0.parentHeader?.messageID == request.header.messageID }
    }

    /// What IOPub published in answer to `request`: status states by name, other messages by type.
    func published(for request: Message) throws -> [String] {
        try iopub.messages(key: Self.key).filter { $0.parentHeader?.messageID == request.header.messageID }.map { message in
            message.messageType == "status" ? (try message.decodeContent(StatusContent.self)).executionState : message.messageType
        }
    }

    @Test("an execution is busy, its input, its output, then idle on IOPub; the reply names its count")
    func executionOrder() async throws {
        let request = try await execute("print")
        #expect(try published(for: request) == ["busy", "execute_input", "stream", "idle"])
        let replies = try replies(on: shell, to: request)
        #expect(replies.map(\.messageType) == ["execute_reply"])
        let reply = try #require(replies.first).decodeContent(ExecuteReply.self)
        #expect(reply.status == .ok && reply.executionCount == 1)
        #expect(replies.first?.identities == [Data("client".utf8)])
    }

    @Test("after a failure with stop_on_error, requests queued before the mark are aborted without running; after it they run")
    func stopOnError() async throws {
        let failing = try await execute("fail")
        #expect(try replies(on: shell, to: failing).first?.decodeContent(ExecuteReply.self).status == .error)
        #expect(try published(for: failing) == ["busy", "execute_input", "error", "idle"])
        #expect(shell.markRequests == 1)
        let queued = try await execute("print")
        #expect(try replies(on: shell, to: queued).first?.decodeContent(ExecuteReply.self).status == .aborted)
        #expect(try published(for: queued) == ["busy", "idle"])
        await core.serve(.mark(shell: nil), from: shell, as: .shell)
        let after = try await execute("print")
        let reply = try #require(try replies(on: shell, to: after).first).decodeContent(ExecuteReply.self)
        #expect(reply.status == .ok && reply.executionCount == 2)
        // Without stop_on_error, a failure aborts nothing.
        _ = try await execute("fail", stopOnError: false)
        #expect(shell.markRequests == 1)
    }

    @Test("an interrupt_request on control, while a cell runs, cancels it: the reply says Interrupted and the kernel goes on")
    func interrupt() async throws {
        let running = Task { try await execute("wait") }
        var started = evaluator.started.makeAsyncIterator()
        _ = await started.next()
        let (interruptRequest, frames) = try request("interrupt_request", [String: String]())
        await core.serve(.message(frames), from: control, as: .control)
        let waiting = try await running.value
        #expect(try replies(on: control, to: interruptRequest).map(\.messageType) == ["interrupt_reply"])
        let reply = try #require(try replies(on: shell, to: waiting).first).decodeContent(ExecuteReply.self)
        #expect(reply.status == .error && reply.ename == "Interrupted")
        // An interrupt counts as a failure for stop_on_error: what was queued behind it is aborted.
        #expect(shell.markRequests == 1)
        await core.serve(.mark(shell: nil), from: shell, as: .shell)
        let next = try await execute("print")
        #expect(try replies(on: shell, to: next).first?.decodeContent(ExecuteReply.self).status == .ok)
    }

    @Test("execute_request on control is refused; an unknown type gets no reply and no busy")
    func wrongChannelAndUnknownType() async throws {
        let misplaced = try await execute("print", on: control)
        let reply = try #require(try replies(on: control, to: misplaced).first)
        #expect(reply.messageType == "execute_reply" && String(decoding: reply.content, as: UTF8.self).contains("must be sent on the shell channel"))
        #expect(try !published(for: misplaced).contains("stream"))
        let (unknown, frames) = try request("no_such_request", [String: String]())
        await core.serve(.message(frames), from: shell, as: .shell)
        #expect(try replies(on: shell, to: unknown).isEmpty && published(for: unknown).isEmpty)
    }
}

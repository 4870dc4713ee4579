import Evaluation
import Foundation
import JupyterProtocol
import Testing
@testable import JupyterKernel

/// Subshells (JEP 91) and the comm lane, through `KernelCore.route` as the shell loop drives it,
/// with ipykernel 7's answers as the reference (its replies are compared with Lumen's in
/// Tests/integration/test_subshells.py).
extension KernelCoreTests {
    /// Serves a control request; returns its reply.
    func control(_ type: String, _ content: some Encodable) async throws -> Message {
        let (message, frames) = try request(type, content)
        await core.serve(.message(frames), from: control, as: .control)
        return try #require(try replies(on: control, to: message).first)
    }

    /// Routes a shell request as the shell loop does; returns it.
    func route(_ type: String, _ content: some Encodable, subshell: String? = nil) async throws -> Message {
        let (message, frames) = try request(type, content, subshell: subshell)
        await core.route(.message(frames))
        return message
    }

    func routeExecute(_ code: String, subshell: String? = nil, stopOnError: Bool = true) async throws -> Message {
        try await route("execute_request", ExecuteRequest(code: code, stopOnError: stopOnError), subshell: subshell)
    }

    /// Waits until `channel` has sent a reply to `request`.
    func awaitReply(on channel: MemoryTransport, to request: Message) async throws -> Message {
        if let reply = try replies(on: channel, to: request).first { return reply }
        for await _ in channel.sending {
            if let reply = try replies(on: channel, to: request).first { return reply }
        }
        throw CancellationError()
    }

    /// Waits until IOPub has published `idle` for `request`.
    func awaitIdle(_ request: Message) async throws {
        if try published(for: request).last == "idle" { return }
        for await _ in iopub.sending where try published(for: request).last == "idle" { return }
    }

    func createSubshell() async throws -> String {
        try await control("create_subshell_request", [String: String]()).decodeContent(CreateSubshellReply.self).subshellID
    }

    @Test("subshells are created, listed and deleted on control; deleting an unknown one is an error; on shell these requests are ignored")
    func subshellLifecycle() async throws {
        let first = try await createSubshell()
        let second = try await createSubshell()
        #expect(first != second)
        #expect(try await control("list_subshell_request", [String: String]()).decodeContent(ListSubshellReply.self).subshellID == [first, second])
        let deleted = try await control("delete_subshell_request", DeleteSubshellRequest(subshellID: first))
        #expect(try deleted.decodeContent(StatusReply.self).status == "ok")
        let unknown = try await control("delete_subshell_request", DeleteSubshellRequest(subshellID: first))
        #expect(try unknown.decodeContent(ControlErrorReply.self) == ControlErrorReply(evalue: "Unknown subshell_id '\(first)'"))
        #expect(try await control("list_subshell_request", [String: String]()).decodeContent(ListSubshellReply.self).subshellID == [second])
        let (onShell, frames) = try request("create_subshell_request", [String: String]())
        await core.serve(.message(frames), from: shell, as: .shell)
        #expect(try replies(on: shell, to: onShell).isEmpty && published(for: onShell).isEmpty)
    }

    @Test("a subshell's cell runs and replies while the main shell's runs; an interrupt cancels only the main shell's; deleting a subshell cancels its own")
    func subshellRunsBesideTheMainShell() async throws {
        let subshell = try await createSubshell()
        var started = evaluator.started.makeAsyncIterator()
        let main = try await routeExecute("wait")
        _ = await started.next()
        let beside = try await routeExecute("print", subshell: subshell)
        let besideReply = try await awaitReply(on: shell, to: beside).decodeContent(ExecuteReply.self)
        #expect(besideReply.status == .ok && besideReply.executionCount == 2)
        #expect(try published(for: beside) == ["busy", "execute_input", "stream", "idle"])

        let waiting = try await routeExecute("wait", subshell: subshell)
        _ = await started.next()
        _ = try await control("interrupt_request", [String: String]())
        let mainReply = try await awaitReply(on: shell, to: main).decodeContent(ExecuteReply.self)
        #expect(mainReply.status == .error && mainReply.ename == "Interrupted")
        #expect(try replies(on: shell, to: waiting).isEmpty)
        _ = try await control("delete_subshell_request", DeleteSubshellRequest(subshellID: subshell))
        let waitingReply = try await awaitReply(on: shell, to: waiting).decodeContent(ExecuteReply.self)
        #expect(waitingReply.ename == "Interrupted")
    }

    @Test("a request for a subshell that does not exist is answered at once with UnknownSubshellError between busy and idle; a comm message gets no reply")
    func unknownSubshell() async throws {
        let request = try await routeExecute("print", subshell: "nope")
        let reply = try #require(try replies(on: shell, to: request).first)
        #expect(reply.messageType == "execute_reply")
        let content = try reply.decodeContent(ErrorContent.self)
        #expect(content.ename == "UnknownSubshellError" && content.evalue == "Unknown subshell_id 'nope'")
        #expect(try published(for: request) == ["busy", "idle"])
        let comm = try await route("comm_msg", CommContent(commID: "x"), subshell: "nope")
        #expect(try replies(on: shell, to: comm).isEmpty && published(for: comm) == ["busy", "idle"])
        #expect(evaluator.comms.withLock { $0.isEmpty })
    }

    @Test("comm messages reach the evaluator, in order, while the main shell's cell runs, its answers parented by them; comm_info lists its comms")
    func commsWhileACellRuns() async throws {
        var started = evaluator.started.makeAsyncIterator()
        let main = try await routeExecute("wait")
        _ = await started.next()
        let open = try await route("comm_open", CommContent(commID: "c1", targetName: "jupyter.widget", data: ["a": .int(1)]))
        let message = try await route("comm_msg", CommContent(commID: "c1", data: ["b": .int(2)]))
        try await awaitIdle(message)
        #expect(evaluator.comms.withLock { $0 } == [
            CommMessage(.open(target: "jupyter.widget"), commID: "c1", data: #"{"a":1}"#), CommMessage(.message, commID: "c1", data: #"{"b":2}"#),
        ])
        #expect(try published(for: open) == ["busy", "comm_msg", "idle"])
        let answer = try #require(try iopub.messages(key: Self.key).first { $0.messageType == "comm_msg" && $0.parentHeader?.messageID == message.header.messageID })
        #expect(try answer.decodeContent(CommContent.self) == CommContent(commID: "c1", data: ["answer": .int(1)]))
        #expect(try replies(on: shell, to: main).isEmpty)
        _ = try await control("interrupt_request", [String: String]())
        _ = try await awaitReply(on: shell, to: main)
        let info = try await route("comm_info_request", CommInfoRequest(targetName: "jupyter.widget"))
        let reply = try await awaitReply(on: shell, to: info).decodeContent(CommInfoReply.self)
        #expect(reply.comms == ["one": .init(targetName: "jupyter.widget")])
    }

    @Test("a failure on a subshell aborts what is queued there until its mark, not the main shell's requests")
    func stopOnErrorPerShell() async throws {
        let subshell = try await createSubshell()
        let failing = try await routeExecute("fail", subshell: subshell)
        _ = try await awaitReply(on: shell, to: failing)
        #expect(shell.markedShells == [subshell])
        let queued = try await routeExecute("print", subshell: subshell)
        let main = try await routeExecute("print")
        #expect(try await awaitReply(on: shell, to: queued).decodeContent(ExecuteReply.self).status == .aborted)
        #expect(try await awaitReply(on: shell, to: main).decodeContent(ExecuteReply.self).status == .ok)
        await core.route(.mark(shell: subshell))
        let after = try await routeExecute("print", subshell: subshell)
        #expect(try await awaitReply(on: shell, to: after).decodeContent(ExecuteReply.self).status == .ok)
    }
}

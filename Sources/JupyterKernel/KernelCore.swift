import Evaluation
import Foundation
import JupyterProtocol
import Logging

/// The heart of the kernel: dispatches requests from the shell and control channels, wraps each
/// in busy/idle, runs each shell's cells one at a time in tasks of their own, and cancels the
/// main shell's on interrupt.
///
/// Shells (JEP 91): the main shell and each subshell `create_subshell_request` makes have a lane
/// of their own, where their requests are handled one after another; lanes, comm messages and
/// control requests interleave, because the actor is free whenever a cell is suspended or
/// running in its own task. Comm messages go to one lane of their own whatever their shell, so a
/// widget's messages are taken, in order, while any shell runs a cell.
actor KernelCore {
    /// The channel a request came on: replies go back on it, and some requests belong on one.
    enum RequestChannel: Sendable {
        case shell
        case control
    }

    /// What a handler answers with.
    private enum Response: Sendable {
        /// Send a reply of `type` on the requesting channel.
        case reply(String, any Encodable & Sendable)
        /// Send nothing back.
        case none
    }

    private let evaluator: any Evaluator
    private let shell: any MessageTransport
    private let info: KernelInfoReply
    private let codec: WireCodec
    private let factory: MessageFactory
    private let iopub: IOPubPublisher
    private let stdin: StdinBridge
    private let logger: Logger
    private let shutdownRequests: AsyncStream<Bool>.Continuation

    /// What a shell's lane carries: a request, or the mark after which it stops aborting.
    enum ShellEvent: Sendable {
        case message(Message)
        case mark
    }

    /// A shell's lane: its events, handled one at a time, in order, by `worker`.
    private struct Lane {
        let events: AsyncStream<ShellEvent>.Continuation
        let worker: Task<Void, Never>
    }

    /// A shell's state (nil: the main shell): its running cell, and whether it answers queued
    /// executions `aborted` after a failure, until its mark.
    private struct ShellState {
        var runningCell: Task<ExecutionError?, Never>?
        var aborting = false
    }

    /// The message types of comms, which go to the comm lane.
    private static let commTypes: Set<String> = ["comm_open", "comm_msg", "comm_close"]
    /// The requests that belong on control only; on shell they are ignored, as ipykernel does.
    private static let controlTypes: Set<String> = ["create_subshell_request", "list_subshell_request", "delete_subshell_request", "debug_request"]

    private var executionCount = 0
    private var lanes: [String?: Lane] = [:]
    /// The subshells, oldest first.
    private var subshells: [String] = []
    private var shells: [String?: ShellState] = [:]
    private var commLane: Lane?
    private var reportedDropKinds: Set<String> = []

    init(
        evaluator: any Evaluator, shell: any MessageTransport, info: KernelInfoReply, codec: WireCodec, factory: MessageFactory,
        iopub: IOPubPublisher, stdin: StdinBridge, logger: Logger, shutdownRequests: AsyncStream<Bool>.Continuation
    ) {
        self.evaluator = evaluator
        self.shell = shell
        // The evaluator says whether it has a debugger; the reply advertises it as ipykernel does.
        var info = info
        if evaluator.hasDebugger {
            info.debugger = true
            if !info.supportedFeatures.contains("debugger") { info.supportedFeatures.append("debugger") }
        }
        self.info = info
        self.codec = codec
        self.factory = factory
        self.iopub = iopub
        self.stdin = stdin
        self.logger = logger
        self.shutdownRequests = shutdownRequests
    }

    // MARK: - Entry points

    /// Handles one event from the shell or control channel (`role`) now, replying on `channel`:
    /// what the control loop does with each request, and each shell's lane with its own.
    func serve(_ event: ChannelEvent, from channel: any MessageTransport, as role: RequestChannel) async {
        switch event {
        case .mark(let shell):
            shells[shell]?.aborting = false
        case .message(let frames):
            guard let message = decode(frames, from: channel.name) else { return }
            await dispatch(message, replyingOn: channel, role: role)
        }
    }

    /// Takes one event of the shell channel without waiting for it to be handled: a request goes
    /// to its shell's lane (the main shell's when its header names no subshell), a comm message
    /// to the comm lane, a mark to the lane of the shell that asked for it. A request for a
    /// subshell there is not is answered at once with an error, as ipykernel does.
    func route(_ event: ChannelEvent) {
        switch event {
        case .mark(let shell):
            lanes[shell]?.events.yield(.mark)
        case .message(let frames):
            guard let message = decode(frames, from: shell.name) else { return }
            let subshell = message.header.subshellID
            if let subshell, lanes[subshell] == nil {
                refuse(message, unknownSubshell: subshell)
            } else if Self.commTypes.contains(message.messageType) {
                comms().events.yield(.message(message))
            } else {
                lane(of: subshell).events.yield(.message(message))
            }
        }
    }

    /// Cancels the main shell's running cell, if any: as in ipykernel, whose SIGINT reaches only
    /// the main thread, a subshell's cell runs on.
    func interrupt() {
        shells[nil]?.runningCell?.cancel()
    }

    /// Ends the kernel without a request (SIGTERM, or its launcher's end): every running cell is
    /// cancelled, as for `shutdown_request`, and the server stops.
    func shutDown() {
        cancelEveryCell()
        shutdownRequests.yield(false)
    }

    private func cancelEveryCell() {
        for state in shells.values { state.runningCell?.cancel() }
    }

    // MARK: - Lanes

    /// The lane of `shell`, started on first use for the main shell.
    private func lane(of shell: String?) -> Lane {
        if let lane = lanes[shell] { return lane }
        let lane = startLane(of: shell)
        lanes[shell] = lane
        return lane
    }

    /// The comm lane, started on first use. Its messages belong to no shell's queue, so no mark
    /// reaches it.
    private func comms() -> Lane {
        if let commLane { return commLane }
        let lane = startLane(of: nil)
        commLane = lane
        return lane
    }

    /// A lane whose worker handles its events in order: requests dispatched as shell requests,
    /// marks ending `shell`'s aborting.
    private func startLane(of shell: String?) -> Lane {
        let (events, continuation) = AsyncStream.makeStream(of: ShellEvent.self)
        let worker = Task {
            for await event in events {
                switch event {
                case .mark: shells[shell]?.aborting = false
                case .message(let message): await dispatch(message, replyingOn: self.shell, role: .shell)
                }
            }
        }
        return Lane(events: continuation, worker: worker)
    }

    /// Answers a shell request for a subshell that does not exist as ipykernel does: busy, an
    /// error reply (none for comm messages, which have no reply), idle.
    private func refuse(_ message: Message, unknownSubshell subshell: String) {
        let reason = "Unknown subshell_id '\(subshell)'"
        logger.warning("cannot handle \(message.messageType) \(message.header.messageID): \(reason)")
        iopub.publishStatus("busy", parent: message.header)
        if !Self.commTypes.contains(message.messageType) {
            send(Self.replyType(for: message.messageType), ErrorContent(ename: "UnknownSubshellError", evalue: reason, traceback: []),
                 answering: message, on: shell)
        }
        iopub.publishStatus("idle", parent: message.header)
    }

    private func createSubshell() -> Response {
        let id = UUID().uuidString.lowercased()
        subshells.append(id)
        _ = lane(of: id)
        return .reply("create_subshell_reply", CreateSubshellReply(subshellID: id))
    }

    /// Deletes a subshell: what is queued on it is dropped and its running cell cancelled.
    private func deleteSubshell(_ request: DeleteSubshellRequest) -> Response {
        guard let lane = lanes.removeValue(forKey: request.subshellID) else {
            return .reply("delete_subshell_reply", ControlErrorReply(evalue: "Unknown subshell_id '\(request.subshellID)'"))
        }
        lane.worker.cancel()
        lane.events.finish()
        shells.removeValue(forKey: request.subshellID)?.runningCell?.cancel()
        subshells.removeAll { $0 == request.subshellID }
        return .reply("delete_subshell_reply", StatusReply())
    }

    /// Decodes and authenticates `frames`, logging (once per kind) and dropping what is invalid.
    func decode(_ frames: [[UInt8]], from channelName: String) -> Message? {
        do {
            return try codec.decode(frames.map { Data($0) })
        } catch {
            let firstOfKind = reportedDropKinds.insert(error.kind).inserted
            logger.log(
                level: firstOfKind ? .warning : .debug,
                "dropped a message on \(channelName): \(error)\(firstOfKind ? " (further ones of this kind are logged at debug level)" : "")"
            )
            return nil
        }
    }

    // MARK: - Dispatch

    private func dispatch(_ message: Message, replyingOn channel: any MessageTransport, role: RequestChannel) async {
        guard let handler = Self.handlers[message.messageType] else {
            logger.warning("ignored a message of unknown type '\(message.messageType)' on \(channel.name)")
            return
        }
        if Self.controlTypes.contains(message.messageType), role != .control {
            logger.warning("ignored a \(message.messageType) on \(channel.name): it belongs on the control channel")
            return
        }
        iopub.publishStatus("busy", parent: message.header)
        let response = await handler(self, message, role)
        if case .reply(let type, let content) = response {
            send(type, content, answering: message, on: channel)
        }
        iopub.publishStatus("idle", parent: message.header)
        if message.messageType == "shutdown_request", case .reply(_, let content) = response,
           let shutdown = content as? ShutdownContent {
            iopub.publish("shutdown_reply", shutdown, parent: message.header)
            cancelEveryCell()
            shutdownRequests.yield(shutdown.restart)
        }
    }

    /// Answers one request, on the core.
    private typealias Handler = @Sendable (isolated KernelCore, Message, RequestChannel) async -> Response

    /// The one table of what the kernel handles, by message type; anything else is logged and
    /// ignored.
    private static let handlers: [String: Handler] = [
        "kernel_info_request": { core, _, _ in .reply("kernel_info_reply", core.info) },
        "execute_request": { core, message, channel in
            guard channel == .shell else { return core.invalid(message, "execute_request must be sent on the shell channel") }
            return await core.execute(message)
        },
        "complete_request": { core, message, _ in
            await core.decoded(message, as: CompleteRequest.self) { request in
                let completion = await core.evaluator.complete(request.code, cursor: request.cursorPos)
                return .reply("complete_reply", CompleteReply(matches: completion.matches, cursorStart: completion.start, cursorEnd: completion.end))
            }
        },
        "inspect_request": { core, message, _ in
            await core.decoded(message, as: InspectRequest.self) { request in
                let bundle = await core.evaluator.inspect(request.code, cursor: request.cursorPos, detailLevel: request.detailLevel)
                return .reply("inspect_reply", InspectReply(found: bundle != nil, data: bundle.map(JupyterOutputSink.wireData) ?? [:]))
            }
        },
        "is_complete_request": { core, message, _ in
            await core.decoded(message, as: IsCompleteRequest.self) { request in
                let reply: IsCompleteReply = switch await core.evaluator.completeness(of: request.code) {
                case .complete: IsCompleteReply(status: "complete")
                case .incomplete(let indent): IsCompleteReply(status: "incomplete", indent: indent)
                case .invalid: IsCompleteReply(status: "invalid")
                }
                return .reply("is_complete_reply", reply)
            }
        },
        "history_request": { core, message, _ in
            await core.decoded(message, as: HistoryRequest.self) { request in
                .reply("history_reply", await core.history(request))
            }
        },
        "comm_info_request": { core, message, _ in
            await core.decoded(message, as: CommInfoRequest.self) { request in
                let open = await core.evaluator.openComms(target: request.targetName)
                return .reply("comm_info_reply", CommInfoReply(comms: open.mapValues(CommInfoReply.Comm.init(targetName:))))
            }
        },
        "comm_open": { core, message, _ in await core.receiveComm(message) },
        "comm_msg": { core, message, _ in await core.receiveComm(message) },
        "comm_close": { core, message, _ in await core.receiveComm(message) },
        "create_subshell_request": { core, _, _ in core.createSubshell() },
        "list_subshell_request": { core, _, _ in .reply("list_subshell_reply", ListSubshellReply(subshellIDs: core.subshells)) },
        "delete_subshell_request": { core, message, _ in
            await core.decoded(message, as: DeleteSubshellRequest.self) { request in core.deleteSubshell(request) }
        },
        "debug_request": { core, message, _ in
            await core.decoded(message, as: DebugRequest.self) { request in
                .reply("debug_reply", await core.evaluator.debug(request, events: DebugEventPublisher(iopub: core.iopub, parent: message.header)))
            }
        },
        "interrupt_request": { core, _, _ in
            core.interrupt()
            return .reply("interrupt_reply", StatusReply())
        },
        "shutdown_request": { core, message, _ in
            await core.decoded(message, as: ShutdownContent.self) { request in
                .reply("shutdown_reply", ShutdownContent(status: "ok", restart: request.restart))
            }
        },
    ]

    /// Decodes the content as `type` and hands it to `handler`; answers an error reply when the
    /// content does not decode.
    private func decoded<Content: Decodable & Sendable>(
        _ message: Message, as type: Content.Type, _ handler: (Content) async -> Response
    ) async -> Response {
        do {
            return await handler(try message.decodeContent(type))
        } catch {
            return invalid(message, "invalid \(message.messageType) content: \(error)")
        }
    }

    private func invalid(_ message: Message, _ reason: String) -> Response {
        logger.warning("\(reason)")
        return .reply(Self.replyType(for: message.messageType), ErrorContent(ename: "InvalidRequest", evalue: reason, traceback: []))
    }

    private static func replyType(for requestType: String) -> String {
        requestType.hasSuffix("_request") ? String(requestType.dropLast("_request".count)) + "_reply" : requestType + "_reply"
    }

    private func send(_ type: String, _ content: some Encodable, answering request: Message, on channel: any MessageTransport) {
        do {
            let reply = try factory.message(type, content: content, parent: request.header, identities: request.identities)
            channel.send(try codec.encode(reply).map { Array($0) })
        } catch {
            logger.error("could not encode \(type): \(error)")
        }
    }

    // MARK: - Comms

    /// Hands a comm message to the evaluator, whose output has the message as parent; content
    /// that does not decode is logged and dropped, as ipykernel does (comm messages have no reply).
    private func receiveComm(_ message: Message) async -> Response {
        let content: CommContent
        do {
            content = try message.decodeContent(CommContent.self)
        } catch {
            logger.warning("invalid \(message.messageType) content: \(error)")
            return .none
        }
        let kind: CommMessage.Kind
        switch message.messageType {
        case "comm_open":
            guard let target = content.targetName else {
                logger.warning("invalid comm_open content: no target_name")
                return .none
            }
            kind = .open(target: target)
        case "comm_msg": kind = .message
        default: kind = .close
        }
        let data = (try? JSONEncoder().encode(content.data)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        let sink = JupyterOutputSink(
            parent: message.header, identities: message.identities, executionCount: executionCount,
            silent: false, allowStdin: false, iopub: iopub, stdin: stdin, payloads: ReplyPayloads()
        )
        await evaluator.receive(CommMessage(kind, commID: content.commID, data: data), output: sink)
        return .none
    }

    // MARK: - Execution

    private func execute(_ message: Message) async -> Response {
        let request: ExecuteRequest
        do {
            request = try message.decodeContent(ExecuteRequest.self)
        } catch {
            logger.warning("invalid execute_request content: \(error)")
            return .reply("execute_reply", ExecuteReply.error(
                executionCount: executionCount,
                ErrorContent(ename: "InvalidRequest", evalue: "invalid execute_request content: \(error)", traceback: [])
            ))
        }
        let shellID = message.header.subshellID
        if shells[shellID]?.aborting == true {
            return .reply("execute_reply", ExecuteReply.aborted(executionCount: executionCount))
        }
        let storeHistory = request.storeHistory && !request.silent
        if storeHistory { executionCount += 1 }
        let count = executionCount
        if !request.silent {
            iopub.publish("execute_input", ExecuteInput(code: request.code, executionCount: count), parent: message.header)
        }
        let sink = JupyterOutputSink(
            parent: message.header, identities: message.identities, executionCount: count,
            silent: request.silent, allowStdin: request.allowStdin, iopub: iopub, stdin: stdin, payloads: ReplyPayloads()
        )
        // JupyterLab and Notebook 7 send the cell's id in the request's metadata.
        let cell = ExecutionRequest(code: request.code, executionCount: count, storeHistory: storeHistory, silent: request.silent,
                                    cellID: message.metadata["cellId"]?.stringValue)
        let evaluator = self.evaluator
        let task = Task.detached(priority: .userInitiated) { () async -> ExecutionError? in
            do throws(ExecutionError) {
                try await evaluator.execute(cell, output: sink)
                return nil
            } catch {
                return error
            }
        }
        shells[shellID, default: ShellState()].runningCell = task
        let failure = await task.value
        shells[shellID]?.runningCell = nil
        guard let failure else {
            return .reply("execute_reply", ExecuteReply.ok(executionCount: count, payload: sink.payloads.payload))
        }
        sink.error(failure)
        // A subshell deleted while its cell ran has no state left to abort.
        if request.stopOnError, shells[shellID] != nil {
            shells[shellID]?.aborting = true
            shell.requestMark(for: shellID)
        }
        return .reply("execute_reply", ExecuteReply.error(
            executionCount: count,
            ErrorContent(ename: failure.name, evalue: failure.message, traceback: failure.traceback)
        ))
    }

    // MARK: - History

    private func history(_ request: HistoryRequest) async -> HistoryReply {
        let query: HistoryQuery = switch request.accessType {
        case "range": .range(session: request.session ?? 0, start: request.start ?? 0, stop: request.stop)
        case "search": .search(pattern: request.pattern ?? "*", count: request.n, unique: request.unique ?? false)
        default: .tail(count: request.n ?? 1000)
        }
        let entries = await evaluator.history(query)
        return HistoryReply(history: entries.map { entry in
            let input = JSONValue.string(entry.input)
            return [.int(entry.session), .int(entry.line), request.output ? .array([input, .null]) : input]
        })
    }
}

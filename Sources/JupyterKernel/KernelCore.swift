import Evaluation
import Foundation
import JupyterProtocol
import Logging

/// The heart of the kernel: dispatches requests from the shell and control channels, wraps each
/// in busy/idle, runs one cell at a time in its own task, and cancels that task on interrupt.
///
/// Shell requests are handled one after another (the shell loop awaits each); control requests
/// interleave with them because the actor is free whenever a cell is suspended or running in its
/// own task.
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

    private var executionCount = 0
    private var runningCell: Task<ExecutionError?, Never>?
    private var abortingQueuedExecutions = false
    private var reportedDropKinds: Set<String> = []

    init(
        evaluator: any Evaluator, shell: any MessageTransport, info: KernelInfoReply, codec: WireCodec, factory: MessageFactory,
        iopub: IOPubPublisher, stdin: StdinBridge, logger: Logger, shutdownRequests: AsyncStream<Bool>.Continuation
    ) {
        self.evaluator = evaluator
        self.shell = shell
        self.info = info
        self.codec = codec
        self.factory = factory
        self.iopub = iopub
        self.stdin = stdin
        self.logger = logger
        self.shutdownRequests = shutdownRequests
    }

    // MARK: - Entry points

    /// Handles one event from the shell or control channel (`role`), replying on `channel`.
    func serve(_ event: ChannelEvent, from channel: any MessageTransport, as role: RequestChannel) async {
        switch event {
        case .mark:
            abortingQueuedExecutions = false
        case .message(let frames):
            guard let message = decode(frames, from: channel.name) else { return }
            await dispatch(message, replyingOn: channel, role: role)
        }
    }

    /// Cancels the running cell, if any.
    func interrupt() {
        runningCell?.cancel()
    }

    /// Ends the kernel without a request (SIGTERM, or its launcher's end): the running cell is
    /// cancelled, as for `shutdown_request`, and the server stops.
    func shutDown() {
        runningCell?.cancel()
        shutdownRequests.yield(false)
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
        iopub.publishStatus("busy", parent: message.header)
        let response = await handler(self, message, role)
        if case .reply(let type, let content) = response {
            send(type, content, answering: message, on: channel)
        }
        iopub.publishStatus("idle", parent: message.header)
        if message.messageType == "shutdown_request", case .reply(_, let content) = response,
           let shutdown = content as? ShutdownContent {
            iopub.publish("shutdown_reply", shutdown, parent: message.header)
            runningCell?.cancel()
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
        "comm_info_request": { _, _, _ in .reply("comm_info_reply", CommInfoReply()) },
        // No comm targets: a comm opened is closed at once; its messages have nowhere to go.
        "comm_open": { core, message, _ in
            if let open = try? message.decodeContent(CommOpen.self) {
                core.iopub.publish("comm_close", CommClose(commID: open.commID), parent: message.header)
            }
            return .none
        },
        "comm_msg": { _, _, _ in .none },
        "comm_close": { _, _, _ in .none },
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
        if abortingQueuedExecutions {
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
        runningCell = task
        let failure = await task.value
        runningCell = nil
        guard let failure else {
            return .reply("execute_reply", ExecuteReply.ok(executionCount: count, payload: sink.payloads.payload))
        }
        sink.error(failure)
        if request.stopOnError {
            abortingQueuedExecutions = true
            shell.requestMark()
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

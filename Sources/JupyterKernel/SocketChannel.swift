import Foundation
import Logging
import Synchronization
import ZeroMQ

/// What a channel's socket thread hands to async code.
enum ChannelEvent: Sendable {
    /// A multipart message received on the socket.
    case message([[UInt8]])
    /// Every message received before `requestMark(for:)` was called for this shell (nil: the
    /// main one) has been delivered.
    case mark(shell: String?)
}

/// One ZeroMQ socket served by a dedicated thread, so that blocking polls never occupy Swift's
/// cooperative pool. The socket is created, used and closed on that thread only.
///
/// Incoming messages arrive on `events` (an `AsyncStream`); `send` may be called from any thread
/// or task and queues the message for the socket thread, which sends queued messages in order.
final class SocketChannel: MessageTransport {
    /// What the socket thread does with what it receives.
    enum Mode: Sendable {
        /// Hand each message to `events` (for IOPub's XPUB socket, the subscriptions).
        case receive
        /// Send each message straight back (the heartbeat).
        case echo
    }

    private struct State {
        var outbox: [[[UInt8]]] = []
        var marksRequested: [String?] = []
        var stopRequested = false
        var exited = false
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// The channel's name, for logs.
    let name: String
    /// Messages received, in order, and marks.
    let events: AsyncStream<ChannelEvent>
    private let eventSink: AsyncStream<ChannelEvent>.Continuation
    private let state = Mutex(State())
    private let wakeup: WakeupPipe
    private let boundEndpoint = Mutex<String?>(nil)
    private let logger: Logger

    private init(name: String, logger: Logger) throws {
        self.name = name
        self.logger = logger
        (events, eventSink) = AsyncStream.makeStream(of: ChannelEvent.self)
        wakeup = try WakeupPipe()
    }

    /// Opens a socket of `type` bound to `endpoint` on its own thread.
    ///
    /// - Returns: once the socket is bound, with `endpoint` resolved (a `*` port made concrete).
    static func open(
        name: String, context: Context, type: SocketType, endpoint: String, mode: Mode, logger: Logger = Logger(label: "lumen.kernel")
    ) async throws -> SocketChannel {
        let channel = try SocketChannel(name: name, logger: logger)
        try await withCheckedThrowingContinuation { (bound: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
                channel.serve(context: context, type: type, endpoint: endpoint, mode: mode, bound: bound)
            }
            thread.name = "lumen-\(name)"
            thread.start()
        }
        return channel
    }

    /// The endpoint the socket is bound to.
    var endpoint: String { boundEndpoint.withLock { $0 } ?? "" }

    /// Queues `frames` to be sent by the socket thread.
    func send(_ frames: [[UInt8]]) {
        let accepted = state.withLock { state in
            guard !state.stopRequested else { return false }
            state.outbox.append(frames)
            return true
        }
        if accepted { wakeup.signal() }
    }

    /// Asks the socket thread to take in every message already waiting on the socket and then
    /// deliver `.mark(shell:)` on `events`: everything before the mark was queued when this was
    /// called.
    func requestMark(for shell: String?) {
        state.withLock { $0.marksRequested.append(shell) }
        wakeup.signal()
    }

    /// Sends what is queued, closes the socket and waits for the thread to end.
    func close() async {
        state.withLock { $0.stopRequested = true }
        wakeup.signal()
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let exited = state.withLock { state in
                if !state.exited { state.exitWaiters.append(waiter) }
                return state.exited
            }
            if exited { waiter.resume() }
        }
    }

    // Runs on the channel's thread: the only code that touches the socket.
    private func serve(context: Context, type: SocketType, endpoint: String, mode: Mode, bound: CheckedContinuation<Void, any Error>) {
        defer { finish() }
        let socket: Socket
        do {
            socket = try Socket(context: context, type: type)
            try socket.setLinger(milliseconds: 1000)
            if type == .extendedPublisher { try socket.passAllSubscriptions() }
            try socket.bind(endpoint)
            let resolved = try socket.lastEndpoint()
            boundEndpoint.withLock { $0 = resolved }
        } catch {
            bound.resume(throwing: KernelError.channel(name: name, reason: "\(error)"))
            return
        }
        bound.resume()
        defer { socket.close() }

        var poller = Poller([.fileDescriptor(wakeup.readDescriptor), .socket(socket)])
        while true {
            let ready: [Bool]
            do {
                ready = try poller.wait()
            } catch {
                return
            }
            if ready[0] { wakeup.drain() }
            let (outbox, marks, stop) = state.withLock { state in
                defer {
                    state.outbox.removeAll(keepingCapacity: true)
                    state.marksRequested.removeAll()
                }
                return (state.outbox, state.marksRequested, state.stopRequested)
            }
            // A mark comes before the replies queued with it are sent: a reply queued after
            // `requestMark(for:)` (the error that asked for the mark) cannot be answered by the
            // client before the mark, so nothing it sends in answer is taken as queued before it.
            if ready[1] || !marks.isEmpty {
                receiveWaiting(on: socket, mode: mode)
            }
            for shell in marks { eventSink.yield(.mark(shell: shell)) }
            for frames in outbox {
                send(frames, on: socket)
            }
            if stop { return }
        }
    }

    private func receiveWaiting(on socket: Socket, mode: Mode) {
        while let frames = try? socket.receive(blocking: false) {
            switch mode {
            case .echo: send(frames, on: socket)
            case .receive: eventSink.yield(.message(frames))
            }
        }
    }

    /// Sends on the socket's thread; a failure (a peer gone, a full queue) is logged, not lost
    /// without a word.
    private func send(_ frames: [[UInt8]], on socket: Socket) {
        do {
            try socket.send(frames)
        } catch {
            logger.warning("could not send a message on \(name): \(error)")
        }
    }

    private func finish() {
        eventSink.finish()
        let waiters = state.withLock { state in
            state.exited = true
            state.stopRequested = true
            defer { state.exitWaiters.removeAll() }
            return state.exitWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

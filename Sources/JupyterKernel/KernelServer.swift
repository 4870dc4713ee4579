import Evaluation
import Executors
import Foundation
import JupyterProtocol
import Logging
import ZeroMQ

/// A Jupyter kernel serving one evaluator over ZeroMQ, as a connection file describes.
///
/// Threads: each socket (shell, control, stdin, IOPub, heartbeat) has a dedicated thread (see
/// `SocketChannel`); the shell and control loops are tasks feeding `KernelCore`; cells run in
/// their own `.userInitiated` tasks.
public struct KernelServer: Sendable {
    private let connection: ConnectionInfo
    private let evaluator: any Evaluator
    private let info: KernelInfoReply
    private let logger: Logger

    /// Prepares a kernel for `connection` that runs cells with `evaluator` and describes itself
    /// with `info`.
    public init(connection: ConnectionInfo, evaluator: any Evaluator, info: KernelInfoReply, logger: Logger) {
        self.connection = connection
        self.evaluator = evaluator
        self.info = info
        self.logger = logger
    }

    /// Binds the sockets and serves requests until a `shutdown_request` arrives.
    ///
    /// - Returns: whether the client asked for a restart.
    public func run() async throws -> Bool {
        let context = try Context()
        let endpoint = connection.endpoint(port:)
        let shell = try await SocketChannel.open(name: "shell", context: context, type: .router, endpoint: endpoint(connection.shellPort), mode: .receive, logger: logger)
        let control = try await SocketChannel.open(name: "control", context: context, type: .router, endpoint: endpoint(connection.controlPort), mode: .receive, logger: logger)
        let stdinChannel = try await SocketChannel.open(name: "stdin", context: context, type: .router, endpoint: endpoint(connection.stdinPort), mode: .receive, logger: logger)
        let iopubChannel = try await SocketChannel.open(name: "iopub", context: context, type: .extendedPublisher, endpoint: endpoint(connection.iopubPort), mode: .receive, logger: logger)
        let heartbeat = try await SocketChannel.open(name: "heartbeat", context: context, type: .reply, endpoint: endpoint(connection.heartbeatPort), mode: .echo, logger: logger)
        let channels = [shell, control, stdinChannel, iopubChannel, heartbeat]
        logger.info("listening: \(channels.map { "\($0.name) \($0.endpoint)" }.joined(separator: ", "))")

        let codec = WireCodec(key: connection.key)
        let factory = MessageFactory()
        let iopub = IOPubPublisher(channel: iopubChannel, codec: codec, factory: factory, logger: logger)
        let stdin = StdinBridge(channel: stdinChannel, codec: codec, factory: factory)
        let (shutdownRequests, shutdownSignal) = AsyncStream.makeStream(of: Bool.self)
        let core = KernelCore(
            evaluator: evaluator, shell: shell, info: info, codec: codec, factory: factory,
            iopub: iopub, stdin: stdin, logger: logger, shutdownRequests: shutdownSignal
        )
        // SIGINT interrupts the cell; SIGTERM (also what the launcher's end sends) shuts down.
        let signals = SignalListener(signals: [SIGINT, SIGTERM]) { number in
            Task { number == SIGTERM ? await core.shutDown() : await core.interrupt() }
        }
        defer { signals.cancel() }
        if let launcher = ParentWatch.launcher() {
            ParentWatch.start(launcher: launcher) { [logger] in
                logger.warning("the process that started this kernel has ended; shutting down")
                Task { await core.shutDown() }
            }
        }

        iopub.publishStatus("starting", parent: nil)
        let restart = await withTaskGroup(of: Void.self, returning: Bool.self) { group in
            group.addTask {
                for await event in shell.events {
                    await core.route(event)
                }
            }
            group.addTask {
                for await event in control.events {
                    await core.serve(event, from: control, as: .control)
                }
            }
            group.addTask {
                // An XPUB socket receives each subscription as one frame: 1 (or 0 to
                // unsubscribe), then the topic.
                for await event in iopubChannel.events {
                    if case .message(let frames) = event, frames.count == 1, frames[0].first == 1 {
                        iopub.welcome(subscription: Array(frames[0].dropFirst()))
                    }
                }
            }
            group.addTask {
                for await event in stdinChannel.events {
                    if case .message(let frames) = event, let message = await core.decode(frames, from: "stdin") {
                        stdin.deliver(message)
                    }
                }
            }
            var restart = false
            for await requested in shutdownRequests {
                restart = requested
                break
            }
            group.cancelAll()
            return restart
        }
        for channel in channels {
            await channel.close()
        }
        // A closed socket's queued messages (the shutdown_reply among them) are sent by the
        // context's I/O thread: only terminating the context waits for them. Left to the
        // context's release, the process could exit first and the reply be lost.
        await DedicatedThread.run(name: "lumen-zmq-term") { context.terminate() }
        logger.info("shut down\(restart ? " for restart" : "")")
        return restart
    }
}

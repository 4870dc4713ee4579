import CZeroMQ
import Synchronization

/// A libzmq context: the owner of I/O threads and the factory of sockets.
///
/// Safety of `@unchecked Sendable`: libzmq documents contexts as thread safe ("A ØMQ context is
/// thread safe and may be shared among as many application threads as necessary", zmq_ctx_new(3));
/// the handle is immutable, and whether it was terminated is behind a `Mutex`.
public final class Context: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    private let terminated = Mutex(false)

    /// Creates a context with libzmq's default number of I/O threads.
    public init() throws(ZeroMQError) {
        guard let handle = zmq_ctx_new() else { throw .last("zmq_ctx_new") }
        self.handle = handle
    }

    /// Terminates the context: blocks until every socket is closed and the messages still queued
    /// on them are sent (each within its socket's linger), so a reply sent just before the end
    /// (a `shutdown_reply`) reaches its peer before the process exits. Later calls do nothing.
    /// It blocks: call it on a thread of its own, never on the cooperative pool.
    public func terminate() {
        terminated.withLock { done in
            guard !done else { return }
            while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
            done = true
        }
    }

    deinit {
        terminate()
    }
}

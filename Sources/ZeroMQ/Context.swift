import CZeroMQ

/// A libzmq context: the owner of I/O threads and the factory of sockets.
///
/// Safety of `@unchecked Sendable`: libzmq documents contexts as thread safe ("A ØMQ context is
/// thread safe and may be shared among as many application threads as necessary", zmq_ctx_new(3)),
/// and this class holds nothing but the immutable context handle.
public final class Context: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer

    /// Creates a context with libzmq's default number of I/O threads.
    public init() throws(ZeroMQError) {
        guard let handle = zmq_ctx_new() else { throw .last("zmq_ctx_new") }
        self.handle = handle
    }

    /// Terminates the context; blocks until every socket is closed and lingering messages are sent.
    deinit {
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }
}

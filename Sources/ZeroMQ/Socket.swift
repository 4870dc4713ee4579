import CZeroMQ

/// A libzmq socket. Like the libzmq socket it wraps, it is not thread safe: one thread creates,
/// uses and closes it, which is why it is not `Sendable`.
public final class Socket {
    let handle: UnsafeMutableRawPointer
    private var isClosed = false
    // Terminating a context waits for its sockets, so each socket keeps its context alive.
    private let context: Context

    /// Opens a socket of `type` in `context`.
    public init(context: Context, type: SocketType) throws(ZeroMQError) {
        guard let handle = zmq_socket(context.handle, type.rawValue) else {
            throw .last("zmq_socket")
        }
        self.handle = handle
        self.context = context
    }

    deinit { close() }

    /// Closes the socket; later calls do nothing.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        zmq_close(handle)
    }

    /// Binds to `endpoint` (e.g. `tcp://127.0.0.1:5555`, `tcp://127.0.0.1:*`, `ipc:///tmp/k-1`).
    public func bind(_ endpoint: String) throws(ZeroMQError) {
        guard zmq_bind(handle, endpoint) == 0 else { throw .last("bind \(endpoint)") }
    }

    /// Connects to `endpoint`.
    public func connect(_ endpoint: String) throws(ZeroMQError) {
        guard zmq_connect(handle, endpoint) == 0 else { throw .last("connect \(endpoint)") }
    }

    /// The endpoint the socket was last bound to, with a wildcard port resolved.
    public func lastEndpoint() throws(ZeroMQError) -> String {
        var buffer = [CChar](repeating: 0, count: 1024)
        var size = buffer.count
        guard zmq_getsockopt(handle, ZMQ_LAST_ENDPOINT, &buffer, &size) == 0 else {
            throw .last("getsockopt ZMQ_LAST_ENDPOINT")
        }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// How long, in milliseconds, unsent messages are kept after `close()`; -1 waits forever.
    public func setLinger(milliseconds: Int32) throws(ZeroMQError) {
        try setOption(ZMQ_LINGER, milliseconds, name: "ZMQ_LINGER")
    }

    /// Makes an `.extendedPublisher` pass on every subscription, a repeated topic included, so
    /// each new subscriber is seen (ZMQ_XPUB_VERBOSE).
    public func passAllSubscriptions() throws(ZeroMQError) {
        try setOption(ZMQ_XPUB_VERBOSE, 1, name: "ZMQ_XPUB_VERBOSE")
    }

    /// Sets the identity a `.dealer` or `.request` socket presents to a router.
    public func setRoutingID(_ identity: [UInt8]) throws(ZeroMQError) {
        let rc = identity.withUnsafeBytes { zmq_setsockopt(handle, ZMQ_ROUTING_ID, $0.baseAddress, $0.count) }
        guard rc == 0 else { throw .last("setsockopt ZMQ_ROUTING_ID") }
    }

    private func setOption(_ option: Int32, _ value: Int32, name: String) throws(ZeroMQError) {
        var value = value
        guard zmq_setsockopt(handle, option, &value, MemoryLayout<Int32>.size) == 0 else {
            throw .last("setsockopt \(name)")
        }
    }

    /// Sends `frames` as one multipart message.
    ///
    /// - Parameter blocking: when false, throws an error whose `isWouldBlock` is true instead
    ///   of waiting for room in the queue.
    public func send(_ frames: [[UInt8]], blocking: Bool = true) throws(ZeroMQError) {
        for (index, frame) in frames.enumerated() {
            var flags: Int32 = blocking ? 0 : ZMQ_DONTWAIT
            if index < frames.count - 1 { flags |= ZMQ_SNDMORE }
            var rc: Int32
            repeat {
                rc = frame.withUnsafeBytes { zmq_send(handle, $0.baseAddress, $0.count, flags) }
            } while rc < 0 && zmq_errno() == EINTR
            guard rc >= 0 else { throw .last("send") }
        }
    }

    /// Receives one whole multipart message.
    ///
    /// - Parameter blocking: when false, returns nil if no message is waiting.
    public func receive(blocking: Bool = true) throws(ZeroMQError) -> [[UInt8]]? {
        var frames: [[UInt8]] = []
        var message = zmq_msg_t()
        while true {
            zmq_msg_init(&message)
            defer { zmq_msg_close(&message) }
            let flags: Int32 = (blocking || !frames.isEmpty) ? 0 : ZMQ_DONTWAIT
            var rc: Int32
            repeat {
                rc = zmq_msg_recv(&message, handle, flags)
            } while rc < 0 && zmq_errno() == EINTR
            if rc < 0 {
                let error = ZeroMQError.last("receive")
                if error.isWouldBlock && frames.isEmpty { return nil }
                throw error
            }
            let size = zmq_msg_size(&message)
            if let data = zmq_msg_data(&message), size > 0 {
                frames.append(Array(UnsafeRawBufferPointer(start: data, count: size)))
            } else {
                frames.append([])
            }
            if zmq_msg_more(&message) == 0 { return frames }
        }
    }
}

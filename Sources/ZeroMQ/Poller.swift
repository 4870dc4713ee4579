import CZeroMQ

/// Waits until sockets or plain file descriptors become readable (`zmq_poll`).
public struct Poller: ~Copyable {
    /// Something `Poller` can wait on.
    public enum Item {
        /// A libzmq socket, readable when a whole message is waiting.
        case socket(Socket)
        /// A POSIX file descriptor, e.g. the read end of a pipe used to wake the poller.
        case fileDescriptor(Int32)
    }

    private var items: [zmq_pollitem_t]
    // Keeps the sockets alive for as long as their raw handles are in `items`.
    private let sockets: [Socket]

    /// Prepares to wait on `items`, all for readability.
    public init(_ items: [Item]) {
        var sockets: [Socket] = []
        self.items = items.map { item in
            switch item {
            case .socket(let socket):
                sockets.append(socket)
                return zmq_pollitem_t(socket: socket.handle, fd: 0, events: Int16(ZMQ_POLLIN), revents: 0)
            case .fileDescriptor(let descriptor):
                return zmq_pollitem_t(socket: nil, fd: descriptor, events: Int16(ZMQ_POLLIN), revents: 0)
            }
        }
        self.sockets = sockets
    }

    /// Blocks until at least one item is readable or `timeoutMilliseconds` pass (-1: no limit).
    ///
    /// - Returns: for each item, in order, whether it is readable.
    public mutating func wait(timeoutMilliseconds: Int = -1) throws(ZeroMQError) -> [Bool] {
        var rc: Int32
        repeat {
            rc = zmq_poll(&items, Int32(items.count), timeoutMilliseconds)
        } while rc < 0 && zmq_errno() == EINTR
        guard rc >= 0 else { throw .last("zmq_poll") }
        return items.map { $0.revents & Int16(ZMQ_POLLIN) != 0 }
    }
}

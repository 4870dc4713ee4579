/// Where the kernel core's messages go and come from, as multipart frames: a ZeroMQ socket on
/// its own thread in the kernel (`SocketChannel`), an in-memory queue in tests. The core never
/// sees a socket, so it is tested without one (as xeus separates `xserver` from the interpreter).
protocol MessageTransport: AnyObject, Sendable {
    /// The channel's name, for logs.
    var name: String { get }
    /// Queues a multipart message to be sent, in order.
    func send(_ frames: [[UInt8]])
    /// Asks for a `.mark(shell:)` event once every message received so far has been delivered:
    /// the shell that failed (nil: the main one) stops aborting its queued executions there.
    func requestMark(for shell: String?)
}

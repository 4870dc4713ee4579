import CZeroMQ

/// An error reported by libzmq, carrying its `errno` and the library's description.
public struct ZeroMQError: Error, Equatable, CustomStringConvertible {
    /// The `errno` value libzmq reported.
    public let code: Int32
    /// What was being attempted when the error happened, e.g. `bind tcp://127.0.0.1:5555`.
    public let operation: String

    /// Captures the calling thread's current `zmq_errno()` for `operation`.
    static func last(_ operation: String) -> ZeroMQError {
        ZeroMQError(code: zmq_errno(), operation: operation)
    }

    /// Whether the error means "try again later" on a non-blocking call.
    public var isWouldBlock: Bool { code == EAGAIN }

    public var description: String {
        "\(operation): \(String(cString: zmq_strerror(code)))"
    }
}

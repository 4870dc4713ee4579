import CZeroMQ

/// The libzmq socket patterns Lumen uses.
public enum SocketType: Sendable {
    case router
    case dealer
    case publisher
    /// A publisher that also receives its subscribers' subscriptions (XPUB).
    case extendedPublisher
    case subscriber
    case reply
    case request
    case pair

    var rawValue: Int32 {
        switch self {
        case .router: ZMQ_ROUTER
        case .dealer: ZMQ_DEALER
        case .publisher: ZMQ_PUB
        case .extendedPublisher: ZMQ_XPUB
        case .subscriber: ZMQ_SUB
        case .reply: ZMQ_REP
        case .request: ZMQ_REQ
        case .pair: ZMQ_PAIR
        }
    }
}

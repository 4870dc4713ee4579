/// Content of `iopub_welcome` (JEP 65): the topic a new IOPub subscriber subscribed to.
public struct IOPubWelcome: Sendable, Codable, Equatable {
    /// The subscription's topic ("" for everything).
    public var subscription: String

    /// The welcome for `subscription`.
    public init(subscription: String) {
        self.subscription = subscription
    }
}

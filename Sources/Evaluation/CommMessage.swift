/// One message of a comm, Jupyter's channel between an object of the session (a widget) and its
/// counterpart in the front end, in either direction. The kernel carries them as `comm_open`,
/// `comm_msg` and `comm_close`; front ends without comms (the terminal, `lumen run`) drop them.
public struct CommMessage: Sendable, Equatable {
    /// What the message does to the comm.
    public enum Kind: Sendable, Equatable {
        /// Opens the comm for `target`, the kind of object the other side should make.
        case open(target: String)
        /// A message on the open comm.
        case message
        /// Closes the comm.
        case close
    }

    /// What the message does.
    public var kind: Kind
    /// The comm's id, the same on both sides.
    public var commID: String
    /// The message's data: the JSON text of an object.
    public var data: String
    /// The message's metadata (ipywidgets' protocol version on an open): the JSON text of an
    /// object.
    public var metadata: String

    /// Creates a message.
    public init(_ kind: Kind, commID: String, data: String = "{}", metadata: String = "{}") {
        self.kind = kind
        self.commID = commID
        self.data = data
        self.metadata = metadata
    }
}

extension CommMessage {
    /// Answers a message no comm or target of the session takes, in ipykernel's words on stderr:
    /// an open for an unknown target is closed at once; a message or close for an unknown comm
    /// is only reported.
    public static func refuse(_ message: CommMessage, output: any OutputSink) {
        switch message.kind {
        case .open(let target):
            output.stream(.stderr, "No such comm target registered: \(target)\n")
            output.comm(CommMessage(.close, commID: message.commID))
        case .message, .close:
            output.stream(.stderr, "No such comm: \(message.commID)\n")
        }
    }
}

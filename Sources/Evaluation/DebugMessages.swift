import OrderedJSON

/// A Debug Adapter Protocol request, as Jupyter's `debug_request` carries it (`seq`, `type`
/// `request`, `command`, `arguments`).
public struct DebugRequest: Sendable, Codable, Equatable {
    /// The client's number for the request, which the response names.
    public var seq: Int
    /// What is asked: `initialize`, `setBreakpoints`, `stackTrace`, Jupyter's `dumpCell`, ….
    public var command: String
    /// The command's arguments (an empty object when the request has none).
    public var arguments: OrderedJSON

    /// Creates a request.
    public init(seq: Int, command: String, arguments: OrderedJSON = [:]) {
        self.seq = seq
        self.command = command
        self.arguments = arguments
    }

    private enum CodingKeys: String, CodingKey {
        case seq, type, command, arguments
    }

    /// Decodes a request; `seq` defaults to 0 and `arguments` to an empty object.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        seq = try container.decodeIfPresent(Int.self, forKey: .seq) ?? 0
        command = try container.decode(String.self, forKey: .command)
        arguments = try container.decodeIfPresent(OrderedJSON.self, forKey: .arguments) ?? [:]
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(seq, forKey: .seq)
        try container.encode("request", forKey: .type)
        try container.encode(command, forKey: .command)
        try container.encode(arguments, forKey: .arguments)
    }
}

/// The answer to a `DebugRequest` (Jupyter's `debug_reply`).
public struct DebugResponse: Sendable, Encodable, Equatable {
    /// The adapter's number for this message.
    public var seq: Int
    /// The request's `seq`.
    public var requestSeq: Int
    /// Whether the request was carried out.
    public var success: Bool
    /// The request's command.
    public var command: String
    /// Why the request failed, when it did.
    public var message: String?
    /// The command's result.
    public var body: OrderedJSON

    /// Creates a response.
    public init(seq: Int, requestSeq: Int, success: Bool, command: String, message: String? = nil, body: OrderedJSON = [:]) {
        self.seq = seq
        self.requestSeq = requestSeq
        self.success = success
        self.command = command
        self.message = message
        self.body = body
    }

    private enum CodingKeys: String, CodingKey {
        case seq, type, command, success, message, body
        case requestSeq = "request_seq"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(seq, forKey: .seq)
        try container.encode("response", forKey: .type)
        try container.encode(requestSeq, forKey: .requestSeq)
        try container.encode(success, forKey: .success)
        try container.encode(command, forKey: .command)
        try container.encodeIfPresent(message, forKey: .message)
        try container.encode(body, forKey: .body)
    }
}

/// Something the debugger tells the client unasked (Jupyter's `debug_event` on IOPub):
/// `stopped`, `continued`, `thread`, `output`.
public struct DebugEvent: Sendable, Encodable, Equatable {
    /// The adapter's number for this message.
    public var seq: Int
    /// What happened.
    public var event: String
    /// Its details.
    public var body: OrderedJSON

    /// Creates an event.
    public init(seq: Int, event: String, body: OrderedJSON) {
        self.seq = seq
        self.event = event
        self.body = body
    }

    private enum CodingKeys: String, CodingKey {
        case seq, type, event, body
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(seq, forKey: .seq)
        try container.encode("event", forKey: .type)
        try container.encode(event, forKey: .event)
        try container.encode(body, forKey: .body)
    }
}

/// Where a debugger's events go (the kernel's IOPub).
public protocol DebugEventSink: Sendable {
    /// Sends `event` to the client.
    func publish(_ event: DebugEvent)
}

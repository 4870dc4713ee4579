/// Splits a byte stream into Server-Sent Events (the WHATWG event-stream format): lines ending in
/// LF, CRLF or CR; `data:` lines joined with LF; a blank line ends an event; comments (`:`) and
/// other fields ignored. Bytes may arrive in pieces of any size, split anywhere.
public struct ServerSentEventParser: Sendable {
    private var line: [UInt8] = []
    private var data: [String] = []
    private var event: String?
    private var lastWasCR = false
    /// The longest line accepted, in bytes; a longer one is an error (a broken or hostile stream).
    public let maximumLineLength: Int

    /// A parser.
    public init(maximumLineLength: Int = 16 << 20) {
        self.maximumLineLength = maximumLineLength
    }

    /// An event: its `data` lines joined, and its `event` name if it had one.
    public struct Event: Sendable, Equatable {
        /// The event name (`event:`), if given.
        public var name: String?
        /// The data.
        public var data: String

        /// An event.
        public init(name: String?, data: String) {
            self.name = name
            self.data = data
        }
    }

    /// A line longer than `maximumLineLength`.
    public struct LineTooLong: Error, CustomStringConvertible {
        /// The limit.
        public let limit: Int
        /// What went wrong.
        public var description: String { "an event-stream line is longer than \(limit) bytes" }
    }

    /// The events completed by `bytes`.
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(LineTooLong) -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") && lastWasCR {
                lastWasCR = false
                continue
            }
            lastWasCR = byte == UInt8(ascii: "\r")
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                if let finished = endLine() { events.append(finished) }
            } else {
                guard line.count < maximumLineLength else { throw LineTooLong(limit: maximumLineLength) }
                line.append(byte)
            }
        }
        return events
    }

    /// Whether bytes of an unfinished event are waiting (the stream was cut mid-event).
    public var hasPartialEvent: Bool { !line.isEmpty || !data.isEmpty }

    private mutating func endLine() -> Event? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty {
            guard !data.isEmpty else {
                event = nil
                return nil
            }
            defer {
                data = []
                event = nil
            }
            return Event(name: event, data: data.joined(separator: "\n"))
        }
        if line.first == UInt8(ascii: ":") { return nil }
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        let field = String(decoding: line[..<colon], as: UTF8.self)
        var valueStart = colon < line.endIndex ? colon + 1 : colon
        if valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let value = String(decoding: line[valueStart...], as: UTF8.self)
        switch field {
        case "data": data.append(value)
        case "event": event = value
        default: break
        }
        return nil
    }
}

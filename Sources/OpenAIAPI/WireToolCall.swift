/// A tool call in a chat message (`tool_calls[]`), or in a streamed chunk the piece of one that
/// the chunk adds (then `index` says which call, and the first piece carries the id, type and
/// name).
public struct WireToolCall: Codable, Sendable, Equatable {
    /// Which call of the message a streamed piece belongs to (streams only).
    public var index: Int?
    /// The call's id.
    public var id: String?
    /// `function`.
    public var type: String?
    /// The function called and its arguments.
    public var function: Function

    /// The function of a call: its name, and its arguments as JSON text.
    public struct Function: Codable, Sendable, Equatable {
        /// The function's name.
        public var name: String?
        /// The arguments, the text of a JSON object.
        public var arguments: String?

        /// A function part.
        public init(name: String?, arguments: String?) {
            self.name = name
            self.arguments = arguments
        }
    }

    /// A call or a streamed piece of one.
    public init(index: Int? = nil, id: String?, type: String? = "function", function: Function) {
        self.index = index
        self.id = id
        self.type = type
        self.function = function
    }
}

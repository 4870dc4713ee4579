import Evaluation

/// A function provided by the host: its name, signature and documentation, and its body.
public struct Builtin: Sendable {
    /// What a built-in's body is given besides its arguments.
    public struct Context: Sendable {
        /// Where the cell's output goes.
        public let output: any OutputSink
        /// Where the call is in the source.
        public let location: SourceLocation
        /// What the session keeps for built-ins.
        let session: SessionState
        /// Calls a Lumen function value (a closure passed to `map`, say) with positional arguments.
        public let call: @Sendable (Value, [Value]) async throws -> Value
    }

    /// The body: computes the result from the arguments.
    public typealias Body = @Sendable (inout Arguments, Context) async throws -> Value

    /// The name the function is called by.
    public let name: String
    /// The signature, as help shows it, e.g. `sleep(_ seconds: Double)`.
    public let signature: String
    /// One paragraph saying what the function does.
    public let summary: String
    let body: Body

    /// Creates a built-in.
    public init(name: String, signature: String, summary: String, body: @escaping Body) {
        self.name = name
        self.signature = signature
        self.summary = summary
        self.body = body
    }
}

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
        /// Calls a Lumen function value with positional arguments, its output going to the sink given.
        let invoke: @Sendable (Value, [Value], any OutputSink) async throws -> Value

        /// Calls a Lumen function value (a closure passed to `map`, say) with positional
        /// arguments, its output going to this context's output.
        public func call(_ function: Value, _ arguments: [Value]) async throws -> Value {
            try await invoke(function, arguments, output)
        }

        /// Where the running cell comes from.
        public var cell: CellOrigin { RunningCell.current.origin }

        /// The session's instance of library `type`, which keeps what its built-ins share.
        public func library<Library: LumenLibrary>(_ type: Library.Type) throws(LumenError) -> Library {
            guard let library = session.libraries.lazy.compactMap({ $0 as? Library }).first else {
                throw LumenError(.name, "this session has no \(Library.self)", at: location)
            }
            return library
        }

        /// Calls `function` as a cell of its own runs (what it shows live is its own): its value,
        /// or nil when that is nil or was already shown live (a generation's streamed text).
        public func callAsCell(_ function: Value, _ arguments: [Value]) async throws -> Value? {
            let cell = RunningCell(origin: RunningCell.current.origin)
            return try await RunningCell.$current.withValue(cell) {
                let value = try await call(function, arguments)
                return value.isNull || cell.wasShownLive(value) ? nil : value
            }
        }

        /// This context with its output going to `output` instead (an Output widget's outputs).
        public func with(output: any OutputSink) -> Context {
            Context(output: output, location: location, session: session, invoke: invoke)
        }

        /// Opens comm `id` to the front end for `target` with `data` (the JSON text of an object)
        /// and `metadata`, and sends the front end's messages on it to `endpoint` until it closes.
        public func openComm(_ endpoint: any CommEndpoint, id: String, target: String, data: String, metadata: String = "{}") {
            session.comms.add(endpoint, id: id, target: target)
            output.comm(CommMessage(.open(target: target), commID: id, data: data, metadata: metadata))
        }

        /// Closes comm `id`: the front end is told, and its messages are no longer taken.
        public func closeComm(_ id: String) {
            session.comms.remove(id)
            output.comm(CommMessage(.close, commID: id))
        }

        /// Notes that `value` (a host object, or an array of them) has been shown while the
        /// cell ran (a generation's live display, a batch's table), so it is not shown again as
        /// the cell's result.
        public func shownLive(_ value: Value) {
            guard let objects = RunningCell.hostObjects(of: value) else { return }
            RunningCell.current.shownLive.withLock { $0.append(objects) }
        }
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
    /// The argument labels its signature lists (`maxTokens` in `generate(_ model, maxTokens: 128)`).
    let labels: [String]

    /// Creates a built-in.
    public init(name: String, signature: String, summary: String, body: @escaping Body) {
        self.name = name
        self.signature = signature
        self.summary = summary
        self.body = body
        labels = Self.labels(in: signature)
    }

    /// The labels of a signature: each name followed by `:` that opens a parameter (after `(` or
    /// `,`), so `_ prompt: String` and `[String: Int]` give none.
    static func labels(in signature: String) -> [String] {
        var labels: [String] = []
        var depth = 0
        var atParameterStart = false
        var name = ""
        for character in signature {
            switch character {
            case "(", "[", "{":
                depth += 1
                atParameterStart = depth == 1 && character == "("
                name = ""
                continue
            case ")", "]", "}":
                depth -= 1
            case ",":
                atParameterStart = depth == 1
                name = ""
                continue
            case ":" where atParameterStart && !name.isEmpty:
                labels.append(name)
            default:
                if atParameterStart, character.isLetter || character.isNumber || character == "_", !(name.isEmpty && character == "_") {
                    name.append(character)
                    continue
                }
                if character == " ", name.isEmpty { continue }
            }
            atParameterStart = false
            name = ""
        }
        return labels
    }
}

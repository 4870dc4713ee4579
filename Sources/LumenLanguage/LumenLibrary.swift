/// A set of built-ins a host plugs into the interpreter (the model host's `load` and `generate`,
/// the run log's `runs`): its functions, its magics, its completions, and what it writes when a
/// session's records are flushed. The language core knows libraries only through this protocol.
///
/// A library is one instance per session, so it can keep what its built-ins share from cell to
/// cell; a built-in finds its library with `Builtin.Context.library(_:)`.
public protocol LumenLibrary: AnyObject, Sendable {
    /// The built-in functions every session with this library starts with.
    var builtins: [Builtin] { get }
    /// The magics (`%runs`) the library adds.
    var magics: [Magic] { get }
    /// The candidates for the text before the cursor when the library completes it better than
    /// names do (the file names inside `load("`), or nil.
    func completion(before text: String) -> TextCompletion?
    /// Writes what the library has recorded; returns when it is on disk.
    func flush() async
}

extension LumenLibrary {
    /// Most libraries add no magics.
    public var magics: [Magic] { [] }
    /// Most libraries complete nothing beyond names.
    public func completion(before text: String) -> TextCompletion? { nil }
    /// Most libraries record nothing.
    public func flush() async {}
}

/// What a library offers for the text before the cursor: the candidates for its last `partial`
/// characters.
public struct TextCompletion: Sendable, Equatable {
    /// The text the candidates replace (what is typed of the argument so far).
    public let partial: String
    /// The candidates, each starting with `partial`.
    public let candidates: [String]

    /// A completion of `partial` by `candidates`.
    public init(partial: String, candidates: [String]) {
        self.partial = partial
        self.candidates = candidates
    }
}

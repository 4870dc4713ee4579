/// An error that ended a cell: its name (`SyntaxError`, `NameError`, `Interrupted`, …), its
/// message, and a traceback that points at the source.
public struct ExecutionError: Error, Sendable, Equatable {
    /// The error's name.
    public var name: String
    /// The error's message.
    public var message: String
    /// Lines of traceback, ready to print.
    public var traceback: [String]

    /// Creates an error.
    public init(name: String, message: String, traceback: [String]) {
        self.name = name
        self.message = message
        self.traceback = traceback
    }

    /// The error a cell ends with when it is interrupted.
    public static let interrupted = ExecutionError(
        name: "Interrupted",
        message: "the cell was interrupted",
        traceback: ["Interrupted: the cell was interrupted"]
    )
}

/// An error about a model: its file, its contents or its use. Always names the file and what
/// is wrong, so users can act on it.
public struct ModelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file the error is about (or the model's name).
    public var file: String
    /// The field, tensor or setting involved.
    public var field: String
    /// What is wrong.
    public var reason: String

    /// Creates an error.
    public init(file: String, field: String, reason: String) {
        self.file = file
        self.field = field
        self.reason = reason
    }

    public var description: String { "\(file): \(field): \(reason)" }
}

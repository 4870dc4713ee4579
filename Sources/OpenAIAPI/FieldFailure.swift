/// A request field whose value the server cannot use: what is wrong, and the field.
public struct FieldFailure: Error, Sendable {
    /// What is wrong.
    public let message: String
    /// The field it is in.
    public let field: String

    /// A failure of `field`.
    public init(message: String, field: String) {
        self.message = message
        self.field = field
    }
}

import Evaluation

/// An object the host puts into Lumen values: a loaded model, a generation. It renders itself
/// and has members: properties, and the built-ins callable as its methods (`m.generate(…)` is
/// `generate(m, …)`), most often from its type's `MemberTable`.
public protocol HostObject: AnyObject, Sendable {
    /// The type name Lumen shows.
    var typeName: String { get }
    /// A one-line text description.
    var summary: String { get }
    /// How the object is displayed.
    var mimeBundle: MIMEBundle { get }
    /// Its properties and methods.
    var members: HostMembers { get }
    /// The number the object stands for in arithmetic and comparisons, if any (a perplexity).
    var numericValue: Double? { get }
    /// The value of a property that has to be waited for (a job's `result`), or nil when `name`
    /// is not one; an interrupt ends the wait.
    func awaitedProperty(_ name: String, at location: SourceLocation) async throws -> Value?
}

extension HostObject {
    /// Most host objects are not numbers.
    public var numericValue: Double? { nil }
    /// Most host objects have nothing to wait for.
    public func awaitedProperty(_ name: String, at location: SourceLocation) async throws -> Value? { nil }
}

/// A host object some of whose properties a cell assigns (`slider.value = 3`), the change
/// published through the context (a widget tells the front end).
public protocol SettableHostObject: HostObject {
    /// The properties `setProperty` takes.
    var settablePropertyNames: [String] { get }
    /// Sets property `name` to `value`; throws a `LumenError` naming what is wrong with it.
    func setProperty(_ name: String, to value: Value, context: Builtin.Context) async throws
}

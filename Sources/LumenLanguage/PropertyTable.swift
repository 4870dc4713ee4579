/// A host object's properties, declared once: each name with how to read it. `propertyNames`
/// and `property(_:)` both come from it (`PropertyTableHostObject`), so the names a type lists
/// are exactly the names it answers.
public struct PropertyTable<Object: AnyObject>: Sendable {
    /// How a property is read from its object.
    public typealias Getter = @Sendable (Object) throws -> Value

    private let entries: [(name: String, read: Getter)]

    /// The properties, in the order completion lists them.
    public init(_ entries: [(String, Getter)]) {
        self.entries = entries.map { (name: $0.0, read: $0.1) }
    }

    /// The properties' names, in order.
    public var names: [String] { entries.map(\.name) }

    /// Property `name` of `object`, or nil when there is no such property.
    public func value(_ name: String, of object: Object) throws -> Value? {
        try entries.first { $0.name == name }.map { try $0.read(object) }
    }
}

/// A host object whose properties are one `PropertyTable`.
public protocol PropertyTableHostObject: HostObject {
    /// The properties of every object of the type.
    static var properties: PropertyTable<Self> { get }
}

extension PropertyTableHostObject {
    /// The table's names.
    public var propertyNames: [String] { Self.properties.names }

    /// The table's reading of `name`.
    public func property(_ name: String) throws -> Value? {
        try Self.properties.value(name, of: self)
    }
}

/// A host object type's members, declared once: each property with how to read it, and each
/// method as the built-in it is (`m.generate(…)` is `generate(m, …)`). Member access, method
/// calls, completion, `help` and the unknown-member error all read it (`MemberTableHostObject`),
/// so the names a type lists are exactly the names it answers.
public struct MemberTable<Object: AnyObject>: Sendable {
    /// How a property is read from its object.
    public typealias Getter = @Sendable (Object) throws -> Value

    private let getters: [(name: String, read: Getter)]
    /// The methods: built-ins called with the object first.
    public let methods: [Builtin]

    /// The properties, in the order completion lists them, and the methods.
    public init(properties: [(String, Getter)] = [], methods: [Builtin] = []) {
        getters = properties.map { (name: $0.0, read: $0.1) }
        self.methods = methods
    }

    /// The properties' names, in order.
    public var properties: [String] { getters.map(\.name) }

    /// Property `name` of `object`, or nil when there is no such property.
    public func value(_ name: String, of object: Object) throws -> Value? {
        try getters.first { $0.name == name }.map { try $0.read(object) }
    }

    /// The members of `object`.
    public func members(of object: Object) -> HostMembers where Object: Sendable {
        HostMembers(properties: properties, methods: methods) { name in try value(name, of: object) }
    }
}

/// One host object's properties and methods.
public struct HostMembers: Sendable {
    /// The properties' names, in the order completion lists them.
    public let properties: [String]
    /// The methods: built-ins called with the object first.
    public let methods: [Builtin]
    private let read: @Sendable (String) throws -> Value?

    /// Members whose properties `read` answers (nil for a name that is none).
    public init(properties: [String], methods: [Builtin] = [], read: @escaping @Sendable (String) throws -> Value?) {
        self.properties = properties
        self.methods = methods
        self.read = read
    }

    /// No properties and no methods.
    public static let none = HostMembers(properties: []) { _ in nil }

    /// The value of property `name`, or nil when there is none.
    public func property(_ name: String) throws -> Value? {
        try read(name)
    }

    /// Method `name`, or nil when there is none.
    public func method(_ name: String) -> Builtin? {
        methods.first { $0.name == name }
    }

    /// Every member's name, sorted: what completion offers and error messages list.
    public var names: [String] { (properties + methods.map(\.name)).sorted() }
}

/// A host object whose members are one `MemberTable`.
public protocol MemberTableHostObject: HostObject {
    /// The members of every object of the type.
    static var memberTable: MemberTable<Self> { get }
}

extension MemberTableHostObject {
    /// The table's members, read from this object.
    public var members: HostMembers { Self.memberTable.members(of: self) }
}

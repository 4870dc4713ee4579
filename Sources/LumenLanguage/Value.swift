import Evaluation

/// A Lumen runtime value. Collections are values, as in Swift: assigning copies them.
public indirect enum Value: Sendable {
    case integer(Int)
    case double(Double)
    case bool(Bool)
    case string(String)
    case null
    case array([Value])
    case dictionary(LumenDictionary)
    /// The integers `lower..<upper`.
    case range(Int, Int)
    case builtin(Builtin)
    case function(Function)
    /// A method looked up on a value, waiting to be called.
    case method(Value, String)
    /// A table, chart, HTML or other rich rendering.
    case rendered(Rendered)
    /// An object of the host: a loaded model, a generation.
    case host(any HostObject)

    /// The name of the value's type, as error messages and inspection show it.
    public var typeName: String {
        switch self {
        case .integer: "Int"
        case .double: "Double"
        case .bool: "Bool"
        case .string: "String"
        case .null: "Nil"
        case .array: "Array"
        case .dictionary: "Dictionary"
        case .range: "Range"
        case .builtin, .function, .method: "Function"
        case .rendered(let rendered): rendered.kind
        case .host(let object): object.typeName
        }
    }

    /// How `print` and interpolation show the value: strings as they are, an object as its text
    /// display (a tensor's values, a lens's table), as Python's `str` shows an array.
    public var printed: String {
        switch self {
        case .string(let text): text
        case .host(let object): object.mimeBundle.plainText ?? object.summary
        default: description
        }
    }

    /// How a cell result shows the value: strings quoted, as source would write them.
    public var description: String {
        switch self {
        case .integer(let value): String(value)
        case .double(let value): String(value)
        case .bool(let value): String(value)
        case .string(let text): text.debugDescription
        case .null: "nil"
        case .array(let elements): "[" + elements.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(let dictionary):
            dictionary.isEmpty ? "[:]" : "[" + dictionary.pairs.map { "\($0.key.description): \($0.value.description)" }.joined(separator: ", ") + "]"
        case .range(let lower, let upper): "\(lower)..<\(upper)"
        case .builtin(let function): function.signature
        case .function(let function): function.signature
        case .method(let receiver, let name): "\(receiver.typeName).\(name)"
        case .rendered(let rendered): rendered.bundle.plainText ?? rendered.kind
        case .host(let object): object.summary
        }
    }

    /// Whether the value is `nil`.
    var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Equality as Lumen's `==` sees it: numbers compare by value across Int and Double.
    package func equals(_ other: Value) -> Bool {
        switch (self, other) {
        case (.integer(let a), .integer(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.integer(let a), .double(let b)), (.double(let b), .integer(let a)): Double(a) == b
        case (.bool(let a), .bool(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.null, .null): true
        case (.array(let a), .array(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.equals($1) }
        case (.dictionary(let a), .dictionary(let b)):
            a.count == b.count && a.pairs.allSatisfy { pair in b[pair.key].map { $0.equals(pair.value) } ?? false }
        case (.range(let a, let b), .range(let c, let d)): a == c && b == d
        case (.rendered(let a), .rendered(let b)): a == b
        case (.host(let a), .host(let b)): a === b
        default: false
        }
    }
}

/// A key of a Lumen dictionary: an Int, Double, Bool or String value.
public enum DictionaryKey: Hashable, Sendable {
    case integer(Int)
    case double(Double)
    case bool(Bool)
    case string(String)

    /// The key for `value`, or nil when the value cannot be a key.
    init?(_ value: Value) {
        switch value {
        case .integer(let number): self = .integer(number)
        case .double(let number): self = number == number.rounded() && abs(number) < 9e15 ? .integer(Int(number)) : .double(number)
        case .bool(let flag): self = .bool(flag)
        case .string(let text): self = .string(text)
        default: return nil
        }
    }

    /// The key as a value.
    var value: Value {
        switch self {
        case .integer(let number): .integer(number)
        case .double(let number): .double(number)
        case .bool(let flag): .bool(flag)
        case .string(let text): .string(text)
        }
    }
}

/// A dictionary that remembers the order its keys were first inserted in.
public struct LumenDictionary: Sendable {
    private var order: [DictionaryKey] = []
    private var storage: [DictionaryKey: Value] = [:]

    /// An empty dictionary.
    public init() {}

    /// A dictionary of `pairs`, keyed by their names, in their order.
    public init(_ pairs: [(String, Value)]) {
        for (key, value) in pairs { self[.string(key)] = value }
    }

    /// The number of entries.
    public var count: Int { order.count }
    /// Whether there are no entries.
    public var isEmpty: Bool { order.isEmpty }
    /// The entries in insertion order.
    public var pairs: [(key: Value, value: Value)] { order.compactMap { key in storage[key].map { (key.value, $0) } } }

    /// The value for `key`; setting nil removes the entry.
    public subscript(key: Value) -> Value? {
        get { DictionaryKey(key).flatMap { storage[$0] } }
        set {
            guard let key = DictionaryKey(key) else { return }
            if let newValue {
                if storage.updateValue(newValue, forKey: key) == nil { order.append(key) }
            } else if storage.removeValue(forKey: key) != nil {
                order.removeAll { $0 == key }
            }
        }
    }
}

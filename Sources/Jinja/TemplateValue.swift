import PythonText

/// A value in a template, with Python's semantics as jinja2 gives them: truthiness, `str()`,
/// `repr()`, equality and ordering.
public indirect enum TemplateValue: Sendable {
    /// A name or attribute that does not exist (jinja2's `Undefined`); carries what was looked up
    /// for the error message when it is used in a way jinja2 rejects.
    case undefined(String)
    case none
    case bool(Bool)
    case int(Int)
    case float(Double)
    case string(String)
    case list([TemplateValue])
    case dictionary(Dictionary)
    /// A `namespace()` object, by its slot in the renderer.
    case namespace(Int)
    /// Something callable: a macro, a global function, or a method bound to its receiver.
    case callable(Callable)

    /// An insertion-ordered dictionary, like a Python `dict`: keys keep their types (a template's
    /// `{0: 'a', 4096: 'b'}` has integer keys, which sort and compare as numbers), and `1`, `1.0`
    /// and `True` are one key, as Python hashes them.
    public struct Dictionary: Sendable {
        /// The keys, in insertion order (each as first inserted, as Python keeps it).
        public private(set) var keys: [TemplateValue] = []
        private var storage: [Key: TemplateValue] = [:]

        /// A key as Python hashes and compares it: numbers by value, strings by their scalars.
        /// Only `None`, booleans, numbers and strings are keys (lists and dicts are unhashable).
        struct Key: Hashable {
            private enum Storage: Hashable {
                case none
                case integer(Int)
                case real(Double)
                case string([Unicode.Scalar])
            }

            private let storage: Storage

            init?(_ value: TemplateValue) {
                switch value {
                case .none: storage = .none
                case .bool(let flag): storage = .integer(flag ? 1 : 0)
                case .int(let number): storage = .integer(number)
                case .float(let number):
                    storage = number.rounded() == number && abs(number) < 0x1p62 ? .integer(Int(number)) : .real(number)
                case .string(let text): storage = .string(Array(text.unicodeScalars))
                default: return nil
                }
            }
        }

        /// An empty dictionary.
        public init() {}

        /// A dictionary of `pairs` with string keys, in their order.
        public init(_ pairs: [(String, TemplateValue)]) {
            for (key, value) in pairs { self[key] = value }
        }

        /// Whether `key` can be a key (Python's hashable types).
        public static func isKey(_ key: TemplateValue) -> Bool { Key(key) != nil }

        /// The value for the string `key`.
        public subscript(key: String) -> TemplateValue? {
            get { self[.string(key)] }
            set { self[.string(key)] = newValue }
        }

        /// The value for `key`; nil for a key that is not in it or cannot be one (setting one
        /// that cannot be is ignored: callers check `isKey` first).
        public subscript(key: TemplateValue) -> TemplateValue? {
            get { Key(key).flatMap { storage[$0] } }
            set {
                guard let hashed = Key(key) else { return }
                if let newValue {
                    if storage.updateValue(newValue, forKey: hashed) == nil { keys.append(key) }
                } else if storage.removeValue(forKey: hashed) != nil {
                    keys.removeAll { Key($0) == hashed }
                }
            }
        }

        /// The pairs, in order.
        public var pairs: [(key: TemplateValue, value: TemplateValue)] { keys.map { ($0, self[$0] ?? .none) } }
        /// The number of entries.
        public var count: Int { keys.count }
    }

    /// What a callable value is.
    public enum Callable: Sendable {
        /// A macro, by its slot in the renderer.
        case macro(Int)
        /// A global function (`range`, `namespace`, `raise_exception`, …).
        case global(String)
        /// A method of a value (`text.strip`, `message.get`).
        case method(TemplateValue, String)
    }

    /// Python's truthiness.
    public var isTruthy: Bool {
        switch self {
        case .undefined, .none: false
        case .bool(let value): value
        case .int(let value): value != 0
        case .float(let value): value != 0
        case .string(let value): !value.isEmpty
        case .list(let items): !items.isEmpty
        case .dictionary(let dictionary): dictionary.count > 0
        case .namespace, .callable: true
        }
    }

    /// The Python type name, for error messages (`'NoneType' object is not iterable`).
    var typeName: String {
        switch self {
        case .undefined: "Undefined"
        case .none: "NoneType"
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .string: "str"
        case .list: "list"
        case .dictionary: "dict"
        case .namespace: "Namespace"
        case .callable: "function"
        }
    }

    var isUndefined: Bool {
        if case .undefined = self { return true }
        return false
    }

    /// Python's `str()`, as `{{ value }}` prints it.
    public var text: String {
        switch self {
        case .undefined: ""
        case .string(let value): value
        default: repr
        }
    }

    /// Python's `repr()`.
    public var repr: String {
        switch self {
        case .undefined: ""
        case .none: "None"
        case .bool(let value): value ? "True" : "False"
        case .int(let value): String(value)
        case .float(let value): PythonText.repr(value)
        case .string(let value): PythonText.repr(value)
        case .list(let items): "[" + items.map(\.repr).joined(separator: ", ") + "]"
        case .dictionary(let dictionary):
            "{" + dictionary.pairs.map { $0.key.repr + ": " + $0.value.repr }.joined(separator: ", ") + "}"
        case .namespace: "<Namespace>"
        case .callable: "<function>"
        }
    }

    /// Python's `==`.
    public func equals(_ other: TemplateValue) -> Bool {
        switch (self, other) {
        case (.undefined, .undefined), (.none, .none): return true
        case (.string(let a), .string(let b)): return Array(a.unicodeScalars) == Array(b.unicodeScalars)
        case (.list(let a), .list(let b)): return a.count == b.count && zip(a, b).allSatisfy { $0.equals($1) }
        case (.dictionary(let a), .dictionary(let b)):
            return a.count == b.count && a.pairs.allSatisfy { pair in b[pair.key].map { $0.equals(pair.value) } ?? false }
        case (.namespace(let a), .namespace(let b)): return a == b
        default:
            if let a = numeric, let b = other.numeric { return a == b }
            return false
        }
    }

    /// The value as a number, for arithmetic and comparison (booleans count as 0 and 1).
    var numeric: Double? {
        switch self {
        case .bool(let value): value ? 1 : 0
        case .int(let value): Double(value)
        case .float(let value): value
        default: nil
        }
    }
}

extension TemplateValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    /// A string value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer value.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// A boolean value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

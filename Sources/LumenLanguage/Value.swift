import Evaluation

/// A Lumen runtime value.
public enum Value: Sendable {
    case integer(Int)
    case double(Double)
    case bool(Bool)
    case string(String)
    case null
    case builtin(Builtin)

    /// The name of the value's type, as error messages and inspection show it.
    public var typeName: String {
        switch self {
        case .integer: "Int"
        case .double: "Double"
        case .bool: "Bool"
        case .string: "String"
        case .null: "Nil"
        case .builtin: "Function"
        }
    }

    /// How `print` shows the value: strings as they are, everything else as its description.
    public var printed: String {
        if case .string(let text) = self { return text }
        return description
    }

    /// How a cell result shows the value: strings quoted, as source would write them.
    public var description: String {
        switch self {
        case .integer(let value): String(value)
        case .double(let value): String(value)
        case .bool(let value): String(value)
        case .string(let text): text.debugDescription
        case .null: "nil"
        case .builtin(let function): function.signature
        }
    }

    /// The value rendered for display.
    public var mimeBundle: MIMEBundle { .plainText(description) }
}

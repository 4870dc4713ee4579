import LumenLanguage
import OrderedJSON
import PythonText

/// Lumen values to and from the JSON widget messages (and tool calls) carry.
public enum JSONValues {
    /// A JSON value as a Lumen value: a number written without a fraction or exponent is an Int.
    /// (The recursion is as deep as the value, which `OrderedJSON`'s reader bounds.)
    public static func value(of json: OrderedJSON) -> Value {
        switch json {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .number(let number, let written):
            if !written.contains(where: { ".eE".contains($0) }), let integer = Int(written) { return .integer(integer) }
            return .double(number)
        case .string(let text): return .string(text)
        case .array(let items): return .array(items.map(value(of:)))
        case .object(let members): return .dictionary(LumenDictionary(members.map { ($0.key, value(of: $0.value)) }))
        }
    }

    /// A Double as JSON writes it (Python's `repr`: `0.1`, `100.0`).
    static func text(of number: Double) -> String {
        PythonText.json(number)
    }

    /// A JSON object of `members`, in their order.
    static func object(_ members: [(String, OrderedJSON)]) -> OrderedJSON {
        .object(members.map { (key: $0.0, value: $0.1) })
    }
}

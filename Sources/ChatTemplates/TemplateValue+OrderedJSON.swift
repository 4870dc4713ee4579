import Jinja
import OrderedJSON

extension TemplateValue {
    /// `json` as a template value, as Python's `json.loads` gives it to a Jinja template: objects
    /// as dictionaries in member order, integers written without a fraction or exponent as
    /// integers, other numbers as floats. (The recursion is as deep as the value, which
    /// `OrderedJSON`'s reader bounds.)
    init(_ json: OrderedJSON) {
        switch json {
        case .null: self = .none
        case .bool(let value): self = .bool(value)
        case .number(let value, let written):
            if !written.contains(where: { ".eE".contains($0) }), let integer = Int(written) {
                self = .int(integer)
            } else {
                self = .float(value)
            }
        case .string(let text): self = .string(text)
        case .array(let items): self = .list(items.map(TemplateValue.init))
        case .object(let members): self = .dictionary(Dictionary(members.map { ($0.key, TemplateValue($0.value)) }))
        }
    }
}

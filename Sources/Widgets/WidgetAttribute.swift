import LumenLanguage
import OrderedJSON

/// One attribute of a widget model's state, as ipywidgets 8 syncs it: its name on the wire, its
/// default, and what values it takes.
struct WidgetAttribute: Sendable {
    /// What values an attribute takes, and whether a cell reaches it.
    indirect enum Kind: Sendable {
        case integer
        case number
        case string
        case bool
        /// One of these strings (`orientation`, `button_style`).
        case oneOf([String])
        /// The kind's values or nil.
        case optional(Kind)
        /// Other widgets (a box's `children`), as `IPY_MODEL_` references.
        case widgets
        /// Kept by the widget itself (the protocol's `_dom_classes`, a dropdown's labels and
        /// index, an output's outputs, `layout` and `style` references): not a cell's to set.
        case managed
    }

    /// The name on the wire (`readout_format`).
    let name: String
    /// The value before anything sets it.
    let defaultValue: OrderedJSON
    /// What values it takes.
    let kind: Kind

    init(_ name: String, _ defaultValue: OrderedJSON, _ kind: Kind) {
        self.name = name
        self.defaultValue = defaultValue
        self.kind = kind
    }

    /// The name a cell uses: the wire name in camel case (`readoutFormat`).
    var label: String {
        let words = name.split(separator: "_")
        return words.enumerated().map { index, word in index == 0 ? String(word) : word.prefix(1).uppercased() + word.dropFirst() }.joined()
    }

    /// Whether a cell reads and sets it.
    var isExposed: Bool {
        if case .managed = kind { return false }
        return true
    }

    /// `value` as the wire carries it, or nil when the attribute does not take it.
    static func json(of value: Value, as kind: Kind) -> OrderedJSON? {
        switch (kind, value) {
        case (.integer, .integer(let integer)): return .number(Double(integer), String(integer))
        case (.number, .integer(let integer)): return .number(Double(integer), String(integer))
        case (.number, .double(let number)) where number.isFinite: return .number(number, JSONValues.text(of: number))
        case (.string, .string(let text)): return .string(text)
        case (.oneOf(let choices), .string(let text)) where choices.contains(text): return .string(text)
        case (.bool, .bool(let flag)): return .bool(flag)
        case (.optional, .null): return .null
        case (.optional(let wrapped), _): return json(of: value, as: wrapped)
        default: return nil
        }
    }

    /// What the attribute takes, in words, for errors.
    static func describe(_ kind: Kind) -> String {
        switch kind {
        case .integer: "an Int"
        case .number: "a number"
        case .string: "a String"
        case .bool: "a Bool"
        case .oneOf(let choices): "one of " + choices.map { "\"\($0)\"" }.joined(separator: ", ")
        case .optional(let wrapped): describe(wrapped) + " or nil"
        case .widgets: "an array of widgets"
        case .managed: "nothing a cell sets"
        }
    }
}

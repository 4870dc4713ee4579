import Evaluation
import LumenLanguage
import OrderedJSON

/// Jupyter widgets in cells (ipywidgets 8's protocol): a constructor for each kind of
/// `WidgetKind.all` (`IntSlider(value: 3, max: 10)`), and the methods widgets share. A widget
/// shown in a Jupyter front end is live; elsewhere (the terminal, `lumen run`) it shows as text
/// and its messages go nowhere.
public final class WidgetLibrary: LumenLibrary {
    /// A library for one session.
    public init() {}

    public var builtins: [Builtin] {
        WidgetKind.all.map(Self.constructor) + Self.methods.map(\.builtin) + [Self.interact]
    }

    static let interact = Builtin(
        name: "interact", signature: "interact(_ function, name: value, …)",
        summary: "A form re-running `function` as its controls change: each labelled value becomes a control (a Bool a Checkbox, an Int or Double a slider around it, a String a Text, an array a Dropdown, a range a slider over it, or the widget given), and `function` is called with their values in order, its output shown below them; a run still going when a control changes is cancelled. Where widgets do not show (the terminal, lumen run), `function` runs once with the initial values."
    ) { arguments, context in
        let function = try arguments.requirePositional("function").0
        let values = arguments.remainingLabelled()
        try arguments.finish()
        guard !values.isEmpty else {
            throw LumenError(.type, "interact() needs at least one labelled value to make a control of (interact(f, temperature: 0.7))",
                             at: context.location)
        }
        return try await InteractiveForm.make(function, values: values, context: context)
    }

    /// A method of widgets: the built-in called with the widget first, and which kinds have it.
    struct Method: Sendable {
        let builtin: Builtin
        let appliesTo: @Sendable (WidgetKind) -> Bool

        var name: String { builtin.name }
    }

    /// The methods, each a built-in taking the widget first.
    static let methods: [Method] = [
        Method(builtin: Builtin(
            name: "observe", signature: "observe(_ widget, _ handler, names: [String] = [\"value\"])",
            summary: "Calls `handler` with `[\"name\", \"old\", \"new\", \"owner\"]` each time one of the widget's properties `names` changes, in the front end or in a cell."
        ) { arguments, context in
            let widget = try widgetArgument(&arguments, "widget")
            let handler = try arguments.requirePositional("handler").0
            var names: Set<String> = ["value"]
            if let given = arguments.labelled("names") {
                guard case .array(let items) = given.0, let strings = Optional(items.compactMap { if case .string(let s) = $0 { s } else { nil } }),
                      strings.count == items.count else {
                    throw LumenError(.type, "observe()'s names: must be an array of property names", at: given.1)
                }
                for name in strings where !widget.settablePropertyNames.contains(name) {
                    throw LumenError(.value, "\(widget.kind.name) has no property '\(name)' to observe", at: given.1)
                }
                names = Set(strings)
            }
            try arguments.finish()
            widget.observe(.function(handler), names: names)
            return .null
        }, appliesTo: { $0.isDOMWidget }),
        Method(builtin: Builtin(
            name: "onClick", signature: "onClick(_ button, _ handler)",
            summary: "Calls `handler` with the button each time it is pressed."
        ) { arguments, _ in
            let widget = try widgetArgument(&arguments, "button", kind: "Button")
            let handler = try arguments.requirePositional("handler").0
            try arguments.finish()
            widget.onClick(.function(handler))
            return .null
        }, appliesTo: { $0.name == "Button" }),
        Method(builtin: Builtin(
            name: "appendStdout", signature: "appendStdout(_ output, _ text: String)",
            summary: "Adds `text` to an Output widget, as printed text."
        ) { arguments, context in
            let widget = try widgetArgument(&arguments, "output", kind: "Output")
            let text = try arguments.string(arguments.requirePositional("text"), "text")
            try arguments.finish()
            OutputWidgetSink(widget: widget, base: context.output).stream(.stdout, text)
            return .null
        }, appliesTo: { $0.name == "Output" }),
        Method(builtin: Builtin(
            name: "appendDisplayData", signature: "appendDisplayData(_ output, _ value)",
            summary: "Adds `value` to an Output widget as it is displayed (a table, a chart, text)."
        ) { arguments, context in
            let widget = try widgetArgument(&arguments, "output", kind: "Output")
            let value = try arguments.requirePositional("value").0
            try arguments.finish()
            OutputWidgetSink(widget: widget, base: context.output).display(value.mimeBundle, displayID: nil)
            return .null
        }, appliesTo: { $0.name == "Output" }),
        Method(builtin: Builtin(
            name: "clearOutput", signature: "clearOutput(_ output)", summary: "Empties an Output widget."
        ) { arguments, context in
            let widget = try widgetArgument(&arguments, "output", kind: "Output")
            try arguments.finish()
            OutputWidgetSink(widget: widget, base: context.output).clearOutput(wait: false)
            return .null
        }, appliesTo: { $0.name == "Output" }),
        Method(builtin: Builtin(
            name: "close", signature: "close(_ widget)", summary: "Closes the widget: its views disappear and it no longer changes."
        ) { arguments, context in
            let widget = try widgetArgument(&arguments, "widget")
            try arguments.finish()
            widget.close(context: context)
            return .null
        }, appliesTo: { $0.isDOMWidget }),
    ]

    /// The constructor of `kind`: every property it shows as a labelled argument, a box's
    /// children also as its first positional one.
    private static func constructor(_ kind: WidgetKind) -> Builtin {
        let labels = kind.attributes.filter(\.isExposed).map(\.label)
        let selection = kind.attribute("_options_labels") != nil ? ["options", "value", "index"] : []
        let takesChildren = kind.attribute("children") != nil
        let parameters = (takesChildren ? ["_ children"] : []) + (selection + labels.filter { $0 != "children" }).map { "\($0):" }
        return Builtin(name: kind.name, signature: "\(kind.name)(\(parameters.joined(separator: ", ")))", summary: kind.summary) { arguments, context in
            var settings: [(String, Value)] = []
            if takesChildren, let children = arguments.nextPositional() { settings.append(("children", children.0)) }
            for label in selection + labels {
                if let given = arguments.labelled(label) { settings.append((label, given.0)) }
            }
            try arguments.finish()
            return .host(try Widget.make(kind, settings: settings, context: context))
        }
    }

    /// The widget an argument names, of kind `kind` when given.
    private static func widgetArgument(_ arguments: inout Arguments, _ name: String, kind: String? = nil) throws -> Widget {
        let (value, location) = try arguments.requirePositional(name)
        guard case .host(let widget as Widget) = value, kind == nil || widget.kind.name == kind else {
            throw LumenError(.type, "expected \(kind.map { "a \($0)" } ?? "a widget") for \(name), not \(value.typeName)", at: location)
        }
        return widget
    }
}

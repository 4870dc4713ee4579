import OrderedJSON

/// One kind of ipywidgets 8 model: its model and view, the style model it comes with, and the
/// attributes of its state with their defaults, as ipywidgets' `get_state()` gives them. The one
/// table of every kind Lumen makes is `WidgetKind.all` (with the layout and style models a
/// widget's `layout` and `style` refer to).
struct WidgetKind: Sendable {
    /// The package a model or view comes from.
    struct Module: Sendable {
        let name: String
        let version: String

        static let base = Module(name: "@jupyter-widgets/base", version: "2.0.0")
        static let controls = Module(name: "@jupyter-widgets/controls", version: "2.0.0")
        static let output = Module(name: "@jupyter-widgets/output", version: "1.0.0")
    }

    /// The constructor's name in cells, ipywidgets' class name (`IntSlider`).
    let name: String
    /// What the constructor makes, for help.
    let summary: String
    let model: String
    let modelModule: Module
    let view: String
    let viewModule: Module
    /// The style model made with each widget of the kind, if it has one.
    let style: String?
    /// The attributes of its state besides the protocol's `_model_*`/`_view_*` names.
    let attributes: [WidgetAttribute]

    /// Whether a widget of the kind is shown (and has `layout`, `tooltip`, …), not only a part of
    /// another's state (a style).
    var isDOMWidget: Bool { attributes.contains { $0.name == "layout" } }

    /// The attribute `name`.
    func attribute(_ name: String) -> WidgetAttribute? {
        attributes.first { $0.name == name }
    }

    /// The state a new widget of the kind starts with, in ipywidgets' order (sorted by name, the
    /// protocol's names among them).
    var defaultState: [(String, OrderedJSON)] {
        let protocolNames: [(String, OrderedJSON)] = [
            ("_model_module", .string(modelModule.name)), ("_model_module_version", .string(modelModule.version)),
            ("_model_name", .string(model)), ("_view_count", .null), ("_view_module", .string(viewModule.name)),
            ("_view_module_version", .string(viewModule.version)), ("_view_name", .string(view)),
        ]
        return (protocolNames + attributes.map { ($0.name, $0.defaultValue) }).sorted { $0.0 < $1.0 }
    }

    // MARK: - The table

    /// The kinds a cell makes by name, in the order help lists them.
    static let all: [WidgetKind] = [
        control("IntSlider", "A slider of whole numbers.", view: "IntSliderView", style: "SliderStyleModel",
                description + disabled + slider(readout: "d", min: int(0), max: int(100), step: int(1), value: int(0), of: .integer)),
        control("FloatSlider", "A slider of real numbers.", view: "FloatSliderView", style: "SliderStyleModel",
                description + disabled + slider(readout: ".2f", min: number(0), max: number(100), step: number(0.1), value: number(0), of: .number)),
        control("Dropdown", "A choice of one of `options` (any values, shown as text); `value` is the chosen one.", view: "DropdownView",
                style: "DescriptionStyleModel",
                description + disabled + [.init("_options_labels", .array([]), .managed), .init("index", .null, .managed)]),
        control("Checkbox", "A check box: `value` is a Bool.", view: "CheckboxView", style: "CheckboxStyleModel",
                description + disabled + [.init("indent", .bool(true), .bool), .init("value", .bool(false), .bool)]),
        control("ToggleButton", "A button that stays pressed: `value` is a Bool.", view: "ToggleButtonView", style: "ToggleButtonStyleModel",
                description + disabled + [buttonStyle, .init("icon", .string(""), .string), .init("value", .bool(false), .bool)]),
        control("Text", "A line of text.", view: "TextView", style: "TextStyleModel",
                description + disabled + [continuousUpdate, placeholder, .init("value", .string(""), .string)]),
        control("Textarea", "Lines of text.", view: "TextareaView", style: "TextStyleModel",
                description + disabled + [continuousUpdate, placeholder, .init("rows", .null, .optional(.integer)), .init("value", .string(""), .string)]),
        control("Button", "A button; `onClick` calls a function when it is pressed.", view: "ButtonView", style: "ButtonStyleModel",
                [buttonStyle, .init("description", .string(""), .string), .init("disabled", .bool(false), .bool), .init("icon", .string(""), .string)]),
        control("Label", "A line of text the user does not edit.", view: "LabelView", style: "LabelStyleModel",
                description + [placeholder, .init("value", .string(""), .string)]),
        control("HTML", "HTML the user does not edit.", view: "HTMLView", style: "HTMLStyleModel",
                description + [placeholder, .init("value", .string(""), .string)]),
        control("IntProgress", "A progress bar of whole numbers.", model: "IntProgressModel", view: "ProgressView", style: "ProgressStyleModel",
                description + progress(min: int(0), max: int(100), value: int(0), of: .integer)),
        control("FloatProgress", "A progress bar of real numbers.", model: "FloatProgressModel", view: "ProgressView", style: "ProgressStyleModel",
                description + progress(min: number(0), max: number(100), value: number(0), of: .number)),
        WidgetKind(name: "Output", summary: "An area of output: `appendStdout`, `appendDisplayData` and `clearOutput` fill it.",
                   model: "OutputModel", modelModule: .output, view: "OutputView", viewModule: .output, style: nil,
                   attributes: domWidget + [.init("msg_id", .string(""), .managed), .init("outputs", .array([]), .managed)]),
        control("HBox", "Widgets side by side: `HBox([a, b])`.", view: "HBoxView", style: nil, box),
        control("VBox", "Widgets one above the other: `VBox([a, b])`.", view: "VBoxView", style: nil, box),
    ]

    /// The kind the table names `name`; the session's own controls (a form, a stop button) ask
    /// only for kinds the table has.
    static func named(_ name: String) -> WidgetKind {
        guard let kind = all.first(where: { $0.name == name }) else { preconditionFailure("WidgetKind.all has no \(name)") }
        return kind
    }

    /// The layout model every shown widget has (all of its attributes unset).
    static let layout = WidgetKind(
        name: "Layout", summary: "", model: "LayoutModel", modelModule: .base, view: "LayoutView", viewModule: .base, style: nil,
        attributes: layoutNames.map { WidgetAttribute($0, .null, .managed) }
    )

    /// The style models, by model name.
    static let styles: [String: WidgetKind] = Dictionary(uniqueKeysWithValues: [
        ("SliderStyleModel", ["description_width", "handle_color"]),
        ("DescriptionStyleModel", ["description_width"]),
        ("CheckboxStyleModel", ["background", "description_width"]),
        ("ToggleButtonStyleModel", ["description_width"] + fontNames),
        ("TextStyleModel", ["background", "description_width", "font_size", "text_color"]),
        ("ButtonStyleModel", ["button_color"] + fontNames),
        ("LabelStyleModel", ["background", "description_width"] + fontNames),
        ("HTMLStyleModel", ["background", "description_width", "font_size", "text_color"]),
        ("ProgressStyleModel", ["bar_color", "description_width"]),
    ].map { model, names in
        (model, WidgetKind(name: model, summary: "", model: model, modelModule: .controls, view: "StyleView", viewModule: .base, style: nil,
                           attributes: names.map { WidgetAttribute($0, $0 == "description_width" ? .string("") : .null, .managed) }))
    })

    // MARK: - Shared attributes

    private static let fontNames = ["font_family", "font_size", "font_style", "font_variant", "font_weight", "text_color", "text_decoration"]
    private static let layoutNames = [
        "align_content", "align_items", "align_self", "border_bottom", "border_left", "border_right", "border_top", "bottom", "display",
        "flex", "flex_flow", "grid_area", "grid_auto_columns", "grid_auto_flow", "grid_auto_rows", "grid_column", "grid_gap", "grid_row",
        "grid_template_areas", "grid_template_columns", "grid_template_rows", "height", "justify_content", "justify_items", "left",
        "margin", "max_height", "max_width", "min_height", "min_width", "object_fit", "object_position", "order", "overflow", "padding",
        "right", "top", "visibility", "width",
    ]

    /// What every shown widget has.
    private static let domWidget: [WidgetAttribute] = [
        .init("_dom_classes", .array([]), .managed), .init("layout", .null, .managed),
        .init("tabbable", .null, .optional(.bool)), .init("tooltip", .null, .optional(.string)),
    ]
    private static let description: [WidgetAttribute] = [
        .init("description", .string(""), .string), .init("description_allow_html", .bool(false), .bool),
    ]
    private static let disabled: [WidgetAttribute] = [.init("disabled", .bool(false), .bool)]
    private static let continuousUpdate = WidgetAttribute("continuous_update", .bool(true), .bool)
    private static let placeholder = WidgetAttribute("placeholder", .string("\u{200B}"), .string)
    private static let orientation = WidgetAttribute("orientation", .string("horizontal"), .oneOf(["horizontal", "vertical"]))
    private static let buttonStyle = WidgetAttribute("button_style", .string(""), .oneOf(["primary", "success", "info", "warning", "danger", ""]))
    private static let box: [WidgetAttribute] = [
        .init("box_style", .string(""), .oneOf(["success", "info", "warning", "danger", ""])), .init("children", .array([]), .widgets),
    ]

    private static func int(_ value: Int) -> OrderedJSON { .number(Double(value), String(value)) }
    private static func number(_ value: Double) -> OrderedJSON { .number(value, JSONValues.text(of: value)) }

    private static func slider(readout: String, min: OrderedJSON, max: OrderedJSON, step: OrderedJSON, value: OrderedJSON,
                               of kind: WidgetAttribute.Kind) -> [WidgetAttribute] {
        [
            .init("behavior", .string("drag-tap"), .oneOf(["drag-tap", "drag-snap", "tap", "drag", "snap"])), continuousUpdate,
            .init("max", max, kind), .init("min", min, kind), orientation, .init("readout", .bool(true), .bool),
            .init("readout_format", .string(readout), .string), .init("step", step, kind), .init("value", value, kind),
        ]
    }

    private static func progress(min: OrderedJSON, max: OrderedJSON, value: OrderedJSON, of kind: WidgetAttribute.Kind) -> [WidgetAttribute] {
        [
            .init("bar_style", .string(""), .oneOf(["success", "info", "warning", "danger", ""])),
            .init("max", max, kind), .init("min", min, kind), orientation, .init("value", value, kind),
        ]
    }

    /// A kind of `@jupyter-widgets/controls`, its model named after it unless given.
    private static func control(_ name: String, _ summary: String, model: String? = nil, view: String, style: String?,
                                _ attributes: [WidgetAttribute]) -> WidgetKind {
        WidgetKind(name: name, summary: summary, model: model ?? name + "Model", modelModule: .controls, view: view, viewModule: .controls,
                   style: style, attributes: domWidget + attributes + (style == nil ? [] : [WidgetAttribute("style", .null, .managed)]))
    }
}

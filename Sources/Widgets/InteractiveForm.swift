import Evaluation
import LumenLanguage
import Synchronization

/// `interact(f, temperature: 0.7, prompt: "Once")`: a control for each labelled value, made as
/// ipywidgets' `interact` makes them (a Bool a Checkbox, an Int or a Double a slider around it, a
/// String a Text, an array a Dropdown, a range a slider over it, a widget itself), above an
/// Output widget showing what `f` prints and returns. `f` runs once at the start and again at
/// each change, with the controls' values in their order; a run still going when a control
/// changes is cancelled first.
final class InteractiveForm: Sendable {
    private let function: Value
    private let controls: [Widget]
    private let output: Widget
    /// The run going on, if any.
    private let running = Mutex<Task<Void, Never>?>(nil)

    private init(function: Value, controls: [Widget], output: Widget) {
        self.function = function
        self.controls = controls
        self.output = output
    }

    /// The form for `function` and the labelled `values`: in a front end with widgets, a VBox of
    /// the controls and the output, whose first run has started; elsewhere `function`'s value for
    /// the initial values, run as part of the cell.
    static func make(_ function: Value, values: [(label: String, value: Value, location: SourceLocation)],
                     context: Builtin.Context) async throws -> Value {
        guard context.output.showsWidgets else {
            let initial = try values.map { try initialValue(of: $0.value, label: $0.label, at: $0.location) }
            return try await context.call(function, initial)
        }
        var controls: [Widget] = []
        for (label, value, location) in values {
            controls.append(try await control(for: value, label: label, at: location, context: context))
        }
        let output = try Widget.make(.named("Output"), settings: [], context: context)
        let form = InteractiveForm(function: function, controls: controls, output: output)
        for control in controls {
            control.observe(.native { context in form.rerun(context: context) }, names: ["value"])
        }
        form.rerun(context: context)
        return .host(try Widget.make(.named("VBox"), settings: [("children", .array((controls + [output]).map(Value.host)))], context: context))
    }

    /// Cancels the run going on and starts another with the controls' values, its output in the
    /// output widget (cleared when the new run first writes).
    private func rerun(context: Builtin.Context) {
        let sink = OutputWidgetSink(widget: output, base: context.output)
        let runContext = context.with(output: sink)
        let arguments = controls.map { (try? $0.property("value")) ?? .null }
        running.withLock { running in
            let previous = running
            previous?.cancel()
            running = Task { [function] in
                await previous?.value
                sink.clearOutput(wait: true)
                do {
                    if let value = try await runContext.callAsCell(function, arguments) {
                        sink.display(value.mimeBundle, displayID: nil)
                    }
                } catch let error as LumenError {
                    if error.kind != .interrupted { sink.error(error.executionError(in: SourceText(label: "interact", text: ""))) }
                } catch {
                    // Cancelled by the next run.
                }
            }
        }
    }

    /// The control ipywidgets' `interact` makes for `value`, described by `label`.
    private static func control(for value: Value, label: String, at location: SourceLocation, context: Builtin.Context) async throws -> Widget {
        let description: (String, Value) = ("description", .string(label))
        switch value {
        case .host(let widget as Widget):
            if case .string("")? = try widget.property("description") {
                try await widget.setProperty("description", to: .string(label), context: context)
            }
            return widget
        case .bool:
            return try Widget.make(.named("Checkbox"), settings: [("value", value), description], context: context)
        case .integer(let number):
            let (low, high) = bounds(around: Double(number))
            return try Widget.make(.named("IntSlider"), settings: [("min", .integer(Int(low))), ("max", .integer(Int(high))), ("value", value), description],
                                   context: context)
        case .double(let number):
            let (low, high) = bounds(around: number)
            return try Widget.make(.named("FloatSlider"), settings: [("min", .double(low)), ("max", .double(high)), ("value", value), description],
                                   context: context)
        case .string:
            return try Widget.make(.named("Text"), settings: [("value", value), description], context: context)
        case .array:
            return try Widget.make(.named("Dropdown"), settings: [("options", value), description], context: context)
        case .range(let lower, let upper) where upper > lower:
            return try Widget.make(.named("IntSlider"), settings: [("min", .integer(lower)), ("max", .integer(upper - 1)),
                                                                   ("value", .integer(middle(lower, upper))), description], context: context)
        default:
            throw noControl(for: value, label: label, at: location)
        }
    }

    /// The value the control for `value` starts at, where no control is made.
    private static func initialValue(of value: Value, label: String, at location: SourceLocation) throws -> Value {
        switch value {
        case .host(let widget as Widget): return (try widget.property("value")) ?? .null
        case .array(let items): return items.first ?? .null
        case .range(let lower, let upper) where upper > lower: return .integer(middle(lower, upper))
        case .bool, .integer, .double, .string: return value
        default: throw noControl(for: value, label: label, at: location)
        }
    }

    /// Where a slider over `lower..<upper` starts: its middle, as ipywidgets starts one.
    private static func middle(_ lower: Int, _ upper: Int) -> Int {
        lower + (upper - 1 - lower) / 2
    }

    private static func noControl(for value: Value, label: String, at location: SourceLocation) -> LumenError {
        LumenError(.type, "interact() makes no control for \(label): \(value.typeName) (give a Bool, a number, a String, an array, a range or a widget)",
                   at: location)
    }

    /// ipywidgets' range around a single value: `-v…3v` (or `3v…-v` below zero, `0…1` at zero).
    private static func bounds(around value: Double) -> (Double, Double) {
        value == 0 ? (0, 1) : value > 0 ? (-value, 3 * value) : (3 * value, -value)
    }
}

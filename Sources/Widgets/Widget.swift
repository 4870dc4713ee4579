import Evaluation
import Foundation
import LumenLanguage
import OrderedJSON
import Synchronization

/// One ipywidgets 8 model of the session, joined to its views in the front end by a comm: a
/// cell reads and sets its attributes as properties (`slider.value = 3` sends the change), the
/// front end's changes arrive as comm messages, and both call its observers. Its layout and style
/// models are widgets of their own (`WidgetKind.layout`, `WidgetKind.styles`).
final class Widget: SettableHostObject, CommEndpoint {
    /// The ipywidgets protocol version Lumen speaks, sent with each comm it opens.
    static let protocolVersion = "2.1.0"
    /// The MIME type of a widget's view in display data.
    static let viewMIMEType = "application/vnd.jupyter.widget-view+json"

    /// What changes: the wire state and what a cell keeps beside it.
    private struct State {
        /// Every attribute's value on the wire, by wire name.
        var values: [String: OrderedJSON]
        /// A box's children, a dropdown's options, kept as the values they are.
        var children: [Widget] = []
        var options: [Value] = []
        /// What is called with a change (`observe`), with the attributes each watches.
        var observers: [(handler: Handler, names: Set<String>)] = []
        /// What is called with the widget when the front end reports an event: a button's
        /// `click` (`onClick`), Enter in a text box (`submit`).
        var eventHandlers: [String: [Handler]] = [:]
    }

    /// What a change or a click calls: a Lumen function, given the change record or the button,
    /// or Swift code of the session's own controls (a stop button, a form).
    enum Handler: Sendable {
        case function(Value)
        case native(@Sendable (Builtin.Context) async throws -> Void)

        func call(with argument: Value, context: Builtin.Context) async throws {
            switch self {
            case .function(let function): _ = try await context.call(function, [argument])
            case .native(let action): try await action(context)
            }
        }
    }

    /// A change of one attribute, as observers receive it.
    private struct Change {
        let label: String
        let old: Value
        let new: Value
    }

    /// The comm's id, the model's id in the front end.
    let id: String
    let kind: WidgetKind
    private let state: Mutex<State>

    private init(kind: WidgetKind, values: [String: OrderedJSON]) {
        id = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        self.kind = kind
        state = Mutex(State(values: values))
    }

    /// Makes a widget of `kind` with the attributes given by label, its layout and style models
    /// beside it; once every setting is taken, opens the comms of the parts first, then the
    /// widget's (a setting refused opens none).
    static func make(_ kind: WidgetKind, settings: [(String, Value)], context: Builtin.Context) throws -> Widget {
        var values = Dictionary(uniqueKeysWithValues: kind.defaultState)
        var parts: [Widget] = []
        if kind.isDOMWidget {
            let layout = Widget(kind: .layout, values: Dictionary(uniqueKeysWithValues: WidgetKind.layout.defaultState))
            values["layout"] = .string("IPY_MODEL_" + layout.id)
            parts.append(layout)
        }
        if let styleName = kind.style, let styleKind = WidgetKind.styles[styleName] {
            let style = Widget(kind: styleKind, values: Dictionary(uniqueKeysWithValues: styleKind.defaultState))
            values["style"] = .string("IPY_MODEL_" + style.id)
            parts.append(style)
        }
        let widget = Widget(kind: kind, values: values)
        for (label, value) in settings {
            _ = try widget.changes(setting: label, to: value, at: context.location)
        }
        widget.clampValue()
        for part in parts + [widget] { part.open(context: context) }
        return widget
    }

    private func open(context: Builtin.Context) {
        let data = JSONValues.object([("state", fullState), ("buffer_paths", .array([]))])
        context.openComm(self, id: id, target: "jupyter.widget", data: data.text, metadata: #"{"version":"\#(Self.protocolVersion)"}"#)
    }

    /// The whole state, sorted by name as ipywidgets sends it.
    private var fullState: OrderedJSON {
        let values = state.withLock { $0.values }
        return JSONValues.object(values.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    // MARK: - HostObject

    var typeName: String { kind.name }

    /// The widget as text, where it cannot show live: its description and value, a box's
    /// children in turn.
    var summary: String {
        let children = state.withLock { $0.children }
        let shown = children.map(\.summary) + ["description", "value"].compactMap { name -> String? in
            guard let attribute = kind.attribute(name), attribute.isExposed, let value = try? property(attribute.label) else { return nil }
            if name == "description", case .string("") = value { return nil }
            return "\(attribute.label): \(value.description)"
        }
        return "\(kind.name)(\(shown.joined(separator: ", ")))"
    }

    var mimeBundle: MIMEBundle {
        MIMEBundle(["text/plain": summary, Self.viewMIMEType: #"{"version_major":2,"version_minor":0,"model_id":"\#(id)"}"#])
    }


    var settablePropertyNames: [String] {
        kind.attributes.filter(\.isExposed).map(\.label) + (isDropdown ? ["options", "value", "index"] : [])
    }

    /// `id` and the settable properties, and the widget methods that apply to its kind.
    var members: HostMembers {
        HostMembers(properties: ["id"] + settablePropertyNames, methods: WidgetLibrary.methods.filter { $0.appliesTo(kind) }.map(\.builtin)) { name in
            try self.property(name)
        }
    }

    private var isDropdown: Bool { kind.attribute("_options_labels") != nil }

    /// Property `name`, or nil when it has none.
    func property(_ name: String) throws -> Value? {
        if name == "id" { return .string(id) }
        return state.withLock { read(name, in: $0) }
    }

    /// Property `label` as a cell sees it.
    private func read(_ label: String, in state: State) -> Value? {
        switch label {
        case "children" where kind.attribute("children") != nil: return .array(state.children.map { .host($0) })
        case "options" where isDropdown: return .array(state.options)
        case "index" where isDropdown: return state.values["index"].map(JSONValues.value(of:))
        case "value" where isDropdown:
            guard case .number(_, let written)? = state.values["index"], let index = Int(written), state.options.indices.contains(index) else { return .null }
            return state.options[index]
        default:
            guard let attribute = kind.attributes.first(where: { $0.label == label && $0.isExposed }) else { return nil }
            return state.values[attribute.name].map(JSONValues.value(of:))
        }
    }

    func setProperty(_ name: String, to value: Value, context: Builtin.Context) async throws {
        let changed = try changes(setting: name, to: value, at: context.location)
        try await publish(changed, context: context)
    }

    // MARK: - Changes

    /// Sets property `label` in the state; returns the wire attributes that changed, with their
    /// old values. Throws naming the property and what it takes when `value` does not fit.
    private func changes(setting label: String, to value: Value, at location: SourceLocation) throws -> [(name: String, old: OrderedJSON)] {
        if isDropdown, ["options", "value", "index"].contains(label) {
            return try setSelection(label, to: value, at: location)
        }
        guard let attribute = kind.attributes.first(where: { $0.label == label && $0.isExposed }) else {
            throw LumenError(.type, "\(kind.name) has no property '\(label)' to set", at: location)
        }
        let json: OrderedJSON
        var children: [Widget]?
        if case .widgets = attribute.kind {
            guard case .array(let items) = value else {
                throw LumenError(.type, "\(kind.name)'s \(label) must be \(WidgetAttribute.describe(attribute.kind)), not \(value.typeName)", at: location)
            }
            let widgets = try items.map { item -> Widget in
                guard case .host(let widget as Widget) = item, widget.kind.isDOMWidget else {
                    throw LumenError(.type, "\(kind.name)'s \(label) must be \(WidgetAttribute.describe(attribute.kind)), not an array holding \(item.typeName)", at: location)
                }
                return widget
            }
            children = widgets
            json = .array(widgets.map { .string("IPY_MODEL_" + $0.id) })
        } else {
            guard let converted = WidgetAttribute.json(of: value, as: attribute.kind) else {
                throw LumenError(.type, "\(kind.name)'s \(label) must be \(WidgetAttribute.describe(attribute.kind)), not \(value.typeName)", at: location)
            }
            json = converted
        }
        return state.withLock { state in
            if let children { state.children = children }
            return Self.assign([(attribute.name, json)], in: &state)
        }
    }

    /// A dropdown's options, value or index, which move its labels and index together.
    private func setSelection(_ label: String, to value: Value, at location: SourceLocation) throws -> [(name: String, old: OrderedJSON)] {
        try state.withLock { state in
            var index: OrderedJSON
            switch label {
            case "options":
                guard case .array(let options) = value else {
                    throw LumenError(.type, "Dropdown's options must be an array, not \(value.typeName)", at: location)
                }
                state.options = options
                index = options.isEmpty ? .null : .number(0, "0")
            case "index":
                if case .null = value {
                    index = .null
                } else {
                    guard case .integer(let position) = value, state.options.indices.contains(position) else {
                        throw LumenError(.index, "Dropdown's index must be nil or one of 0..<\(state.options.count), not \(value.description)", at: location)
                    }
                    index = .number(Double(position), String(position))
                }
            default:
                if case .null = value {
                    index = .null
                } else {
                    guard let position = state.options.firstIndex(where: { $0.equals(value) }) else {
                        throw LumenError(.value, "\(value.description) is not one of the Dropdown's options", at: location)
                    }
                    index = .number(Double(position), String(position))
                }
            }
            let labels = OrderedJSON.array(state.options.map { .string($0.printed) })
            return Self.assign([("_options_labels", labels), ("index", index)], in: &state)
        }
    }

    /// Writes `values` into the state; returns those that changed, with their old values.
    private static func assign(_ values: [(String, OrderedJSON)], in state: inout State) -> [(name: String, old: OrderedJSON)] {
        values.compactMap { name, json in
            let old = state.values[name] ?? .null
            guard old != json else { return nil }
            state.values[name] = json
            return (name, old)
        }
    }

    /// The changes of `first` and then `second` as one: an attribute changed by both keeps its
    /// first old value, so an observer sees the value move once, as ipywidgets holds its
    /// notifications until a change is validated.
    private static func merging(_ first: [(name: String, old: OrderedJSON)], _ second: [(name: String, old: OrderedJSON)]) -> [(name: String, old: OrderedJSON)] {
        first + second.filter { change in !first.contains { $0.name == change.name } }
    }

    /// Keeps a bounded widget's value within `min...max`, as ipywidgets validates it; returns
    /// the change when it moved.
    @discardableResult
    private func clampValue() -> [(name: String, old: OrderedJSON)] {
        state.withLock { state in
            guard let low = state.values["min"], let high = state.values["max"], case .number(let bottom, _) = low,
                  case .number(let top, _) = high, case .number(let value, _)? = state.values["value"],
                  let bound = value < bottom ? low : value > top ? high : nil else { return [] }
            return Self.assign([("value", bound)], in: &state)
        }
    }

    /// Sends `changed` attributes (and a value they pushed out of bounds) to the front end and
    /// calls the observers of each.
    private func publish(_ changed: [(name: String, old: OrderedJSON)], context: Builtin.Context) async throws {
        let all = Self.merging(changed, clampValue())
        guard !all.isEmpty else { return }
        let current = state.withLock { $0.values }
        let names = Set(all.map(\.name))
        send(method: "update", state: current.filter { names.contains($0.key) }, context: context)
        try await notify(all, context: context)
    }

    private func send(method: String, state values: [String: OrderedJSON], context: Builtin.Context) {
        send(method: method, state: values, on: context.output)
    }

    private func send(method: String, state values: [String: OrderedJSON], on output: any OutputSink) {
        let data = JSONValues.object([
            ("method", .string(method)), ("state", JSONValues.object(values.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })),
            ("buffer_paths", .array([])),
        ])
        output.comm(CommMessage(.message, commID: id, data: data.text))
    }

    /// Calls each observer watching a changed attribute with `["name", "old", "new", "owner"]`.
    private func notify(_ changed: [(name: String, old: OrderedJSON)], context: Builtin.Context) async throws {
        let (observers, changes) = state.withLock { state -> ([(handler: Handler, names: Set<String>)], [Change]) in
            let changes = changed.flatMap { name, old -> [Change] in
                if name == "index", isDropdown {
                    var before = state
                    before.values["index"] = old
                    return [Change(label: "index", old: JSONValues.value(of: old), new: read("index", in: state) ?? .null),
                            Change(label: "value", old: read("value", in: before) ?? .null, new: read("value", in: state) ?? .null)]
                }
                guard let attribute = kind.attribute(name), attribute.isExposed else { return [] }
                let new = read(attribute.label, in: state) ?? .null
                return [Change(label: attribute.label, old: JSONValues.value(of: old), new: new)]
            }
            return (state.observers, changes)
        }
        for change in changes {
            for observer in observers where observer.names.contains(change.label) {
                let record = LumenDictionary([("name", .string(change.label)), ("old", change.old), ("new", change.new), ("owner", .host(self))])
                try await observer.handler.call(with: .dictionary(record), context: context)
            }
        }
    }

    // MARK: - What cells add

    /// Calls `handler` with each change of the attributes `names` (by label).
    func observe(_ handler: Handler, names: Set<String>) {
        state.withLock { $0.observers.append((handler, names)) }
    }

    /// Calls `handler` with the widget each time the button is pressed.
    func onClick(_ handler: Handler) {
        on("click", handler)
    }

    /// Calls `handler` with the widget each time the front end reports `event`.
    func on(_ event: String, _ handler: Handler) {
        state.withLock { $0.eventHandlers[event, default: []].append(handler) }
    }

    /// Changes an output widget's nbformat outputs with `body` and sends them.
    func changeOutputs(on output: any OutputSink, _ body: (inout [OrderedJSON]) -> Void) {
        let outputs = state.withLock { state -> OrderedJSON in
            var items: [OrderedJSON] = []
            if case .array(let existing)? = state.values["outputs"] { items = existing }
            body(&items)
            state.values["outputs"] = .array(items)
            return .array(items)
        }
        send(method: "update", state: ["outputs": outputs], on: output)
    }

    /// Closes the widget's comm; the front end removes its views.
    func close(context: Builtin.Context) {
        context.closeComm(id)
    }

    // MARK: - CommEndpoint

    func receive(_ message: CommMessage, context: Builtin.Context) async {
        guard case .message = message.kind else { return }
        guard let data = try? OrderedJSON(parsing: message.data), case .string(let method)? = data["method"] else {
            context.output.stream(.stderr, "\(kind.name) \(id): a widget message without a method\n")
            return
        }
        do {
            switch method {
            case "update":
                guard case .object(let members)? = data["state"] else { return }
                try await update(members, context: context)
            case "request_state":
                send(method: "update", state: state.withLock { $0.values }, context: context)
            case "custom":
                if case .string(let event)? = data["content"]?["event"] {
                    for handler in state.withLock({ $0.eventHandlers[event] ?? [] }) {
                        try await handler.call(with: .host(self), context: context)
                    }
                }
            default:
                context.output.stream(.stderr, "Unknown front-end to back-end widget msg with method \"\(method)\"\n")
            }
        } catch let error as LumenError {
            context.output.error(error.executionError(in: SourceText(label: "\(kind.name) \(id)", text: "")))
        } catch {
            context.output.error(ExecutionError(name: "Error", message: "\(error)", traceback: ["\(error)"]))
        }
    }

    /// A change from the front end: echoed back (ipywidgets' `echo_update`, so other views of the
    /// model follow), checked attribute by attribute (one that does not fit is reported and left
    /// as it was), then observed; a value put back within bounds is sent back.
    private func update(_ members: [(key: String, value: OrderedJSON)], context: Builtin.Context) async throws {
        let known = members.filter { kind.attribute($0.key) != nil }
        if !known.isEmpty {
            send(method: "echo_update", state: Dictionary(known.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 }), context: context)
        }
        var accepted: [(String, OrderedJSON)] = []
        for (name, json) in known {
            guard let attribute = kind.attribute(name) else { continue }
            if fits(json, attribute) {
                accepted.append((name, json))
            } else {
                context.output.stream(.stderr, "\(kind.name) \(id): the front end set '\(name)' to \(json.text), but it takes \(WidgetAttribute.describe(attribute.kind))\n")
            }
        }
        if let (low, high) = invertedBounds(after: accepted) {
            // As ipywidgets refuses it ("setting min > max"): both left as they were, and the front end told so.
            context.output.stream(.stderr, "\(kind.name) \(id): the front end set min \(low.text) above max \(high.text); both are left as they were\n")
            accepted.removeAll { $0.0 == "min" || $0.0 == "max" }
            send(method: "update", state: state.withLock { $0.values.filter { $0.key == "min" || $0.key == "max" } }, context: context)
        }
        let changed = state.withLock { Self.assign(accepted, in: &$0) }
        let clamped = clampValue()
        if !clamped.isEmpty {
            send(method: "update", state: state.withLock { $0.values.filter { $0.key == "value" } }, context: context)
        }
        try await notify(Self.merging(changed, clamped), context: context)
    }

    /// The bounds `changes` would leave, when they would put `min` above `max`.
    private func invertedBounds(after changes: [(String, OrderedJSON)]) -> (low: OrderedJSON, high: OrderedJSON)? {
        let current = state.withLock { $0.values }
        func bound(_ name: String) -> OrderedJSON? { changes.last { $0.0 == name }?.1 ?? current[name] }
        guard changes.contains(where: { $0.0 == "min" || $0.0 == "max" }), let low = bound("min"), let high = bound("max"),
              case .number(let bottom, _) = low, case .number(let top, _) = high, bottom > top else { return nil }
        return (low, high)
    }

    /// Whether the front end's `json` is a value `attribute` takes.
    private func fits(_ json: OrderedJSON, _ attribute: WidgetAttribute) -> Bool {
        switch attribute.kind {
        case .widgets, .managed:
            // The front end sets a dropdown's index; nothing else it keeps.
            if attribute.name == "index" {
                if case .null = json { return true }
                if case .number(_, let written) = json, let index = Int(written) { return state.withLock { $0.options.indices.contains(index) } }
            }
            return false
        default:
            return WidgetAttribute.json(of: JSONValues.value(of: json), as: attribute.kind) != nil
        }
    }
}

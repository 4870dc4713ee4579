import Display
import Evaluation

/// The built-ins that show things: `display`, `update`, `clear`, `table`, `chart`, `html`,
/// `markdown`, `json` and `help`.
enum DisplayLibrary {
    static let all: [Builtin] = [display, update, clear, table, chart, html, markdown, json, help]

    static let display = Builtin(
        name: "display",
        signature: "display(_ value, id: String? = nil) or display(html: String)",
        summary: "Shows a value (tables, charts and HTML rendered) in the output area; with `id`, a display that `update(_:id:)` can replace."
    ) { arguments, context in
        var bundle: MIMEBundle
        if let html = arguments.labelled("html") {
            let text = try arguments.string(html, "html")
            bundle = MIMEBundle(["text/html": text, "text/plain": HTML.plainText(of: text)])
        } else {
            bundle = try arguments.requirePositional("value").0.mimeBundle
        }
        let id = try arguments.labelledString("id")
        try arguments.finish()
        context.output.display(bundle, displayID: id)
        return .null
    }

    static let update = Builtin(
        name: "update",
        signature: "update(_ value, id: String)",
        summary: "Replaces what every display shown with `id` shows."
    ) { arguments, context in
        let value = try arguments.requirePositional("value").0
        let id = try arguments.string(try arguments.requireLabelled("id"), "id")
        try arguments.finish()
        context.output.updateDisplay(value.mimeBundle, displayID: id)
        return .null
    }

    static let clear = Builtin(
        name: "clear",
        signature: "clear(wait: Bool = false)",
        summary: "Clears the cell's output; with `wait: true`, only when the next output arrives (no flicker)."
    ) { arguments, context in
        let wait: Bool
        switch arguments.labelled("wait") {
        case nil: wait = false
        case (.bool(let flag), _)?: wait = flag
        case (let other, let location)?: throw LumenError(.type, "clear() expects a Bool for 'wait', got \(other.typeName)", at: location)
        }
        try arguments.finish()
        context.output.clearOutput(wait: wait)
        return .null
    }

    static let table = Builtin(
        name: "table",
        signature: "table(_ rows, columns: [String]? = nil) -> Table",
        summary: "A table from an array of dictionaries (columns from their keys) or of arrays (with `columns:`)."
    ) { arguments, context in
        let (rows, location) = try arguments.requirePositional("rows")
        let columns = try arguments.labelled("columns").map { argument throws in
            try Operators.elements(of: argument.0, at: argument.1).map(\.printed)
        }
        try arguments.finish()
        let records = try Operators.elements(of: rows, at: location)
        let table: Table
        if let columns {
            table = Table(columns: columns, rows: try records.map { try Operators.elements(of: $0, at: location).map(\.printed) })
        } else if records.allSatisfy({ if case .dictionary = $0 { true } else { false } }) {
            table = Value.table(fromRecords: records)
        } else {
            throw LumenError(.type, "table() needs an array of dictionaries, or arrays with columns:", at: location)
        }
        return .rendered(Rendered(kind: "Table", bundle: table.mimeBundle))
    }

    static let chart = Builtin(
        name: "chart",
        signature: "chart(_ values, labels: [String]? = nil, kind: \"bar\" | \"line\" = \"bar\", title: String = \"\", x: String = \"\", y: String = \"\") -> Chart",
        summary: "A bar or line chart of an array of numbers, or of several series given as a dictionary from name to numbers."
    ) { arguments, context in
        let (data, location) = try arguments.requirePositional("values")
        let labels = try arguments.labelled("labels").map { argument throws in try Operators.elements(of: argument.0, at: argument.1).map(\.printed) }
        let kindName = try arguments.labelledString("kind") ?? "bar"
        let title = try arguments.labelledString("title") ?? ""
        let xLabel = try arguments.labelledString("x") ?? ""
        let yLabel = try arguments.labelledString("y") ?? ""
        try arguments.finish()
        guard let kind = Chart.Kind(rawValue: kindName) else {
            throw LumenError(.value, "chart kind must be \"bar\" or \"line\", not \"\(kindName)\"", at: location)
        }
        func numbers(_ value: Value) throws -> [Double] {
            try Operators.elements(of: value, at: location).map { element in
                guard let number = Operators.number(element) else {
                    throw LumenError(.type, "chart() needs numbers, got \(element.typeName)", at: location)
                }
                return number
            }
        }
        var series: [Chart.Series]
        if case .dictionary(let named) = data {
            series = try named.pairs.map { Chart.Series(name: $0.key.printed, values: try numbers($0.value)) }
        } else {
            series = [Chart.Series(name: "", values: try numbers(data))]
        }
        let count = series.map(\.values.count).max() ?? 0
        let chart = Chart(kind: kind, labels: labels ?? (0..<count).map(String.init), series: series, title: title, xLabel: xLabel, yLabel: yLabel)
        return .rendered(Rendered(kind: "Chart", bundle: chart.mimeBundle))
    }

    static let html = textRenderer("html", "HTML", mimeType: "text/html", summary: "Shows the text as HTML.") { HTML.plainText(of: $0) }
    static let markdown = textRenderer("markdown", "Markdown", mimeType: "text/markdown", summary: "Shows the text as Markdown.") { $0 }

    private static func textRenderer(_ name: String, _ kind: String, mimeType: String, summary: String,
                                     plain: @escaping @Sendable (String) -> String) -> Builtin {
        Builtin(name: name, signature: "\(name)(_ text: String) -> \(kind)", summary: summary) { arguments, _ in
            let text = try arguments.string(try arguments.requirePositional("text"), "text")
            try arguments.finish()
            return .rendered(Rendered(kind: kind, bundle: MIMEBundle([mimeType: text, "text/plain": plain(text)])))
        }
    }

    static let json = Builtin(name: "json", signature: "json(_ value) -> JSON", summary: "Shows a value as JSON (collapsible in JupyterLab).") { arguments, _ in
        let (value, location) = try arguments.requirePositional("value")
        try arguments.finish()
        guard let text = value.jsonText else {
            throw LumenError(.value, "a \(value.typeName) has no JSON form", at: location)
        }
        return .rendered(Rendered(kind: "JSON", bundle: MIMEBundle(["application/json": text, "text/plain": text])))
    }

    static let help = Builtin(name: "help", signature: "help(_ value = nil)", summary: "Shows a function's signature and documentation, or a value's type and contents, in the pager. `name?` does the same. Without an argument, lists the built-in functions.") { arguments, context in
        guard let (value, _) = arguments.nextPositional() else {
            try arguments.finish()
            context.output.page(builtinList(context.session.builtins.values))
            return .null
        }
        try arguments.finish()
        context.output.page(documentation(of: value))
        return .null
    }

    /// Every built-in by name, with the first sentence of its summary.
    static func builtinList(_ builtins: some Sequence<Builtin>) -> MIMEBundle {
        let rows = builtins.sorted { $0.name < $1.name }.map { [$0.name, firstSentence(of: $0)] }
        var bundle = Table(columns: ["built-in", "what it does"], rows: rows).mimeBundle
        bundle.data["text/plain"] = "Built-in functions (help(name) or name? for one of them):\n\n" + (bundle.data["text/plain"] ?? "")
        return bundle
    }

    /// The first sentence of a built-in's summary.
    private static func firstSentence(of builtin: Builtin) -> String {
        builtin.summary.firstRange(of: ". ").map { String(builtin.summary[..<$0.lowerBound]) + "." } ?? builtin.summary
    }

    /// What help shows for a value: a function's or method's documentation, a host object's
    /// members, or any other value's type and contents.
    static func documentation(of value: Value, name: String? = nil) -> MIMEBundle {
        switch value {
        case .builtin(let builtin):
            return MIMEBundle([
                "text/plain": "\(builtin.signature)\n\n\(builtin.summary)",
                "text/markdown": "```swift\n\(builtin.signature)\n```\n\n\(builtin.summary)",
            ])
        case .function(let function):
            return MIMEBundle(["text/plain": function.signature, "text/markdown": "```swift\n\(function.signature)\n```"])
        case .method(.host(let object), let method):
            if let builtin = object.members.method(method) { return documentation(of: .builtin(builtin)) }
        case .host(let object):
            let members = object.members
            let rows = members.properties.map { [$0, "property"] } + members.methods.map { ["\($0.name)(…)", firstSentence(of: $0)] }
            var bundle = Table(columns: ["member", "what it is"], rows: rows).mimeBundle
            bundle.data["text/plain"] = "\(name.map { "\($0): " } ?? "")\(object.typeName): \(object.summary)\n\n" + (bundle.data["text/plain"] ?? "")
            return bundle
        default:
            break
        }
        let preview = value.description.count > 300 ? String(value.description.prefix(300)) + "…" : value.description
        let size: String = switch value {
        case .array(let elements): ", \(elements.count) elements"
        case .dictionary(let dictionary): ", \(dictionary.count) entries"
        case .string(let text): ", \(text.count) characters"
        default: ""
        }
        let summary = "\(name.map { "\($0): " } ?? "")\(value.typeName)\(size)\n\(preview)"
        return MIMEBundle(["text/plain": summary, "text/markdown": "**\(name ?? "value")**: `\(value.typeName)`\(size)\n\n```\n\(preview)\n```"])
    }
}

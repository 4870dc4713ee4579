import Evaluation
import Foundation
import OrderedJSON

/// A value as the debugger's Variables panel shows it: a line of text, and the children it
/// expands into (an array's elements, a dictionary's entries, a host object's properties: a
/// model's file and architecture, a tensor's shape and values).
struct VariableView {
    /// At most this many characters of a value's text are shown.
    static let textLimit = 1_000
    /// At most this many children are listed unless the client pages (`start`, `count`).
    static let childLimit = 1_000

    let value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// The value's one-line text, cut at `textLimit` characters: a host object's text display
    /// on one line (a tensor's shape, then its first values; a model's card as name–value pairs).
    var text: String {
        let full = switch value {
        case .host(let object): Self.oneLine(object.mimeBundle.plainText ?? object.summary)
        case .rendered(let rendered): Self.oneLine(rendered.bundle.plainText ?? rendered.kind)
        default: value.description
        }
        return full.count > Self.textLimit ? String(full.prefix(Self.textLimit)) + "…" : full
    }

    /// A text display on one line: its lines joined by two spaces, a table's rules left out and
    /// its column padding narrowed to two spaces.
    static func oneLine(_ text: String) -> String {
        text.split(separator: "\n")
            .filter { line in !line.allSatisfy { " -─│┼|+".contains($0) } }
            .map { line in
                line.split(separator: "  ", omittingEmptySubsequences: true)
                    .map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { !$0.isEmpty }
                    .joined(separator: "  ")
            }
            .joined(separator: "  ")
    }

    /// Whether the value expands.
    var hasChildren: Bool {
        switch value {
        case .array(let items): !items.isEmpty
        case .dictionary(let dictionary): !dictionary.isEmpty
        case .host(let object): !object.members.properties.isEmpty
        default: false
        }
    }

    /// The children, named as the panel lists them. A property that cannot be read shows why.
    var children: [(name: String, value: Value)] {
        switch value {
        case .array(let items):
            return items.enumerated().map { (name: String($0.offset), value: $0.element) }
        case .dictionary(let dictionary):
            return dictionary.pairs.map { (name: $0.key.description, value: $0.value) }
        case .host(let object):
            let members = object.members
            return members.properties.map { name in
                do {
                    return (name: name, value: try members.property(name) ?? .null)
                } catch {
                    return (name: name, value: .string("(cannot be read: \(error))"))
                }
            }
        default:
            return []
        }
    }

    /// A display bundle as Jupyter's wire carries it: JSON types as objects, the rest as text.
    static func wireData(of bundle: MIMEBundle) -> OrderedJSON {
        .object(bundle.data.sorted { $0.key < $1.key }.map { mimeType, text in
            if MIMEBundle.isJSON(mimeType), let json = try? OrderedJSON(parsing: text) { return (key: mimeType, value: json) }
            return (key: mimeType, value: .string(text))
        })
    }
}

/// Where the output of code the client evaluates outside a stopped cell goes: `output` events
/// (the debug console), text only.
struct DebugOutputSink: OutputSink {
    let debugger: Debugger

    private func output(_ text: String, category: String) {
        debugger.publish("output", ["category": .string(category), "output": .string(text)])
    }

    func stream(_ stream: StandardStream, _ text: String) { output(text, category: stream == .stderr ? "stderr" : "stdout") }
    func display(_ bundle: MIMEBundle, displayID: String?) { output((bundle.plainText ?? "") + "\n", category: "stdout") }
    func updateDisplay(_ bundle: MIMEBundle, displayID: String) { display(bundle, displayID: displayID) }
    func progress(_ bundle: MIMEBundle, id: String, finished: Bool) {}
    func clearOutput(wait: Bool) {}
    func executeResult(_ bundle: MIMEBundle) { display(bundle, displayID: nil) }
    func error(_ error: ExecutionError) { output(error.traceback.joined(separator: "\n") + "\n", category: "stderr") }
    func page(_ bundle: MIMEBundle) { display(bundle, displayID: nil) }

    func requestInput(prompt: String, password: Bool) async throws -> String {
        throw InputUnavailableError(reason: "code the debugger evaluates cannot ask for input")
    }
}

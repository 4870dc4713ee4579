import ChatTemplates
import Foundation
import GenerationTypes
import LumenLanguage
import OpenAIAPI

/// The tools a `say` offers (`tools:`, `toolChoice:`, `maxToolRounds:`): the functions as the
/// server's `ToolFields` reads them from the same JSON (so a cell and a request are checked
/// alike), the Lumen functions that answer those given a `call:`, and the grammar a required or
/// named call is held to.
struct ToolSet: Sendable {
    /// The functions offered, the choice, and whether a reply may call several.
    let request: ToolFields.Request
    /// The Lumen function that answers each tool given one, by name.
    let callables: [String: Value]
    /// How many times the tools' results may go back to the model in one `say`.
    let maxRounds: Int
    /// The tool-call syntax of the conversation's template.
    let syntax: ToolCallSyntax?
    /// The grammar of a required or named call; nil for `auto` and `none`.
    let constraint: OutputConstraint?

    /// The most rounds `maxToolRounds` may ask for.
    static let roundLimit = 64

    /// The tools of a `say` call's arguments for a conversation rendered by `template` (nil: a
    /// served model's, which cannot offer tools yet), or nil when it offers none.
    init?(_ arguments: inout Arguments, template: ChatTemplate?, location: SourceLocation) throws(LumenError) {
        let given = arguments.labelled("tools")
        let choice = try arguments.labelledString("toolChoice")
        let rounds = try arguments.labelledInteger("maxToolRounds") ?? 8
        guard (0...Self.roundLimit).contains(rounds) else { throw LumenError(.value, "maxToolRounds must be 0 to \(Self.roundLimit), got \(rounds)", at: location) }
        guard let (value, toolsLocation) = given else {
            if choice != nil { throw LumenError(.value, "toolChoice: needs tools:", at: location) }
            return nil
        }
        guard let template else {
            throw LumenError(.value, "tools: a served model's conversation cannot offer tools yet; load the model to use them", at: toolsLocation)
        }
        guard case .array(let items) = value else { throw LumenError(.type, "tools: must be an Array of Dictionaries, got \(value.typeName)", at: toolsLocation) }
        var tools: [String] = []
        var callables: [String: Value] = [:]
        for (index, item) in items.enumerated() {
            guard case .dictionary(var fields) = item else {
                throw LumenError(.type, "tools[\(index)] must be a Dictionary with name, description and parameters, got \(item.typeName)", at: toolsLocation)
            }
            let call = fields[.string("call")]
            fields[.string("call")] = nil
            // The short form (name, description, parameters) is OpenAI's function object.
            let tool: Value = fields[.string("type")] == nil ? .dictionary(LumenDictionary([("type", .string("function")), ("function", .dictionary(fields))])) : .dictionary(fields)
            guard let json = tool.jsonText else { throw LumenError(.value, "tools[\(index)] has values with no JSON form", at: toolsLocation) }
            tools.append(json)
            if let call {
                switch call {
                case .function, .builtin: break
                default: throw LumenError(.type, "tools[\(index)].call must be a function, got \(call.typeName)", at: toolsLocation)
                }
                guard case .string(let name)? = fields[.string("name")] ?? fields[.string("function")].flatMap({ function -> Value? in
                    if case .dictionary(let inner) = function { inner[.string("name")] } else { nil }
                }) else { continue }
                callables[name] = call
            }
        }
        let choiceJSON = switch choice {
        case nil: "\"auto\""
        case let keyword? where ["auto", "none", "required"].contains(keyword): "\"\(keyword)\""
        case let name?: #"{"type":"function","function":{"name":"# + (Value.string(name).jsonText ?? "\"\"") + "}}"
        }
        let body = #"{"tools":["# + tools.joined(separator: ",") + #"],"tool_choice":"# + choiceJSON + "}"
        let request: ToolFields.Request
        do {
            guard let read = try ToolFields.tools(in: Data(body.utf8)) else { return nil }
            request = read
        } catch {
            throw LumenError(.value, error.message.replacingOccurrences(of: "tool_choice", with: "toolChoice"), at: location)
        }
        self.request = request
        self.callables = callables
        maxRounds = rounds
        syntax = template.toolCalls
        if request.choice != .auto, request.choice != .none, syntax == nil {
            throw LumenError(.value, "toolChoice: asks for a tool call, but the chat template describes no tools (template: gives one that does)", at: location)
        }
        do {
            constraint = try syntax?.constraint(calling: request.functions, choice: request.choice, parallel: request.parallel)
        } catch {
            throw LumenError(.value, "tools: \(error)", at: location)
        }
    }

    /// A stream that tells the reply's tool calls from its text (none for `toolChoice: "none"`).
    func callStream() -> ToolCallStream {
        ToolCallStream(syntax: request.choice == .none ? nil : syntax, offered: request.functions, makeID: ToolCallStream.callID)
    }

    /// The Lumen functions that answer `calls`, in order, when every call has one.
    func functions(for calls: [ToolCall]) -> [Value]? {
        let found = calls.compactMap { callables[$0.name] }
        return found.count == calls.count ? found : nil
    }
}

import Foundation
import GenerationTypes
import OrderedJSON

/// The request fields that offer the model tools: OpenAI's `tools` (functions, each with a name,
/// a description and the JSON Schema of its arguments), `tool_choice` (`auto`, `none`,
/// `required`, or `{"type": "function", "function": {"name": …}}`) and `parallel_tool_calls`.
/// Read from the body as ordered JSON, so a schema's properties reach the chat template and the
/// grammar in the order the request lists them.
public enum ToolFields {
    /// The fields' names.
    public static let fieldNames: Set<String> = ["tools", "tool_choice", "parallel_tool_calls"]
    /// The most functions a request may offer (OpenAI's limit).
    public static let maximumTools = 128

    /// What a request's tool fields ask for.
    public struct Request: Sendable, Equatable {
        /// The functions offered, in order.
        public var functions: [ToolFunction]
        /// Whether and which the model must call.
        public var choice: ToolChoice
        /// Whether a reply may call several.
        public var parallel: Bool
    }

    /// The tools the JSON object `body` offers, or nil when it offers none (no `tools`, or an
    /// empty list).
    ///
    /// - Throws: `FieldFailure` naming the field that is malformed, a function named twice, or a
    ///   `tool_choice` that names a function not offered or asks for calls without tools.
    public static func tools(in body: Data) throws(FieldFailure) -> Request? {
        guard let object = try? OrderedJSON(parsing: String(decoding: body, as: UTF8.self)), case .object = object else { return nil }
        var functions: [ToolFunction] = []
        switch object["tools"] {
        case nil, .null?:
            break
        case .array(let items)?:
            guard items.count <= maximumTools else {
                throw FieldFailure(message: "tools holds \(items.count) functions; a request may offer at most \(maximumTools)", field: "tools")
            }
            for (index, item) in items.enumerated() {
                functions.append(try function(item, at: "tools[\(index)]"))
                if functions.dropLast().contains(where: { $0.name == functions.last?.name }) {
                    throw FieldFailure(message: "tools[\(index)] names the function '\(functions[index].name)' a second time", field: "tools")
                }
            }
        default:
            throw FieldFailure(message: "tools must be a list of functions", field: "tools")
        }
        let parallel: Bool
        switch object["parallel_tool_calls"] {
        case nil, .null?: parallel = true
        case .bool(let value)?: parallel = value
        default: throw FieldFailure(message: "parallel_tool_calls must be true or false", field: "parallel_tool_calls")
        }
        let choice = try self.choice(object["tool_choice"], offered: functions)
        guard !functions.isEmpty else { return nil }
        return Request(functions: functions, choice: choice, parallel: parallel)
    }

    /// The schema of a function that takes no arguments.
    private static let noArguments = #"{"type":"object","properties":{}}"#

    /// The function `item` (at `path`) describes.
    private static func function(_ item: OrderedJSON, at path: String) throws(FieldFailure) -> ToolFunction {
        guard case .object = item, item["type"] == .string("function") else {
            throw FieldFailure(message: "\(path) must be an object of type \"function\"", field: "tools")
        }
        guard let function = item["function"], case .object = function else {
            throw FieldFailure(message: "\(path).function must be an object", field: "tools")
        }
        guard case .string(let name)? = function["name"], !name.isEmpty, name.count <= 64,
              name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }) else {
            throw FieldFailure(message: "\(path).function.name must be 1 to 64 letters, digits, underscores or dashes", field: "tools")
        }
        let description: String
        switch function["description"] {
        case nil, .null?: description = ""
        case .string(let text)?: description = text
        default: throw FieldFailure(message: "\(path).function.description must be a string", field: "tools")
        }
        // No parameters, or an empty object, is a function of no arguments (as llama.cpp reads it).
        let parameters: String
        switch function["parameters"] {
        case nil, .null?: parameters = Self.noArguments
        case .object(let members)?: parameters = members.isEmpty ? Self.noArguments : OrderedJSON.object(members).text
        default: throw FieldFailure(message: "\(path).function.parameters must be a JSON Schema object", field: "tools")
        }
        return ToolFunction(name: name, description: description, parameters: parameters)
    }

    /// The choice `value` asks for among `offered`.
    private static func choice(_ value: OrderedJSON?, offered: [ToolFunction]) throws(FieldFailure) -> ToolChoice {
        let choice: ToolChoice
        switch value {
        case nil, .null?, .string("auto")?: return .auto
        case .string("none")?: return .none
        case .string("required")?: choice = .required
        case .object?:
            guard value?["type"] == .string("function"), case .string(let name)? = value?["function"]?["name"] else {
                throw FieldFailure(message: #"tool_choice must be "auto", "none", "required" or {"type": "function", "function": {"name": …}}"#, field: "tool_choice")
            }
            guard offered.contains(where: { $0.name == name }) else {
                throw FieldFailure(message: "tool_choice names the function '\(name)', which tools does not offer", field: "tool_choice")
            }
            choice = .function(name)
        default:
            throw FieldFailure(message: #"tool_choice must be "auto", "none", "required" or {"type": "function", "function": {"name": …}}"#, field: "tool_choice")
        }
        guard !offered.isEmpty else { throw FieldFailure(message: "tool_choice asks for a tool call, but tools offers none", field: "tool_choice") }
        return choice
    }
}

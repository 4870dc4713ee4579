import Foundation
import GenerationTypes
import OrderedJSON

/// The request fields that constrain the output: OpenAI's `response_format` (`json_object`, and
/// `json_schema` with its `schema`; llama-server also takes a `schema` beside `json_object`) and
/// llama-server's `grammar` and `json_schema`. Read from and written into the body as ordered
/// JSON, since Foundation's coders keep no member order and a schema's properties come out in the
/// order it lists them.
public enum ConstraintFields {
    /// The fields' names.
    public static let fieldNames: Set<String> = ["response_format", "grammar", "json_schema"]

    /// The constraint the JSON object `body` asks for and the field that asks, or nil when it
    /// asks for none.
    ///
    /// - Throws: `FieldFailure` naming the field that is malformed, or two that ask for different ones.
    public static func constraint(in body: Data) throws(FieldFailure) -> (constraint: OutputConstraint, field: String)? {
        guard case .object(let members) = try? OrderedJSON(parsing: String(decoding: body, as: UTF8.self)) else { return nil }
        var found: [(OutputConstraint, String)] = []
        for (key, value) in members where fieldNames.contains(key) {
            switch (key, value) {
            case (_, .null): continue
            case ("grammar", .string(let text)):
                found.append((.grammar(text), key))
            case ("json_schema", .object):
                found.append((.jsonSchema(value.text), key))
            case ("response_format", .object):
                switch value["type"] {
                case .string("text")?: continue
                case .string("json_object")?:
                    found.append((value["schema"].map { .jsonSchema($0.text) } ?? .jsonObject, key))
                case .string("json_schema")?:
                    guard let schema = value["json_schema"]?["schema"] ?? value["schema"], case .object = schema else {
                        throw FieldFailure(message: "response_format of type json_schema needs json_schema.schema, an object", field: key)
                    }
                    found.append((.jsonSchema(schema.text), key))
                default:
                    throw FieldFailure(message: "response_format's type must be text, json_object or json_schema", field: key)
                }
            default:
                throw FieldFailure(message: "field '\(key)' should be \(key == "grammar" ? "a string" : "an object")", field: key)
            }
        }
        if found.count > 1 {
            throw FieldFailure(message: "fields '\(found[0].1)' and '\(found[1].1)' both constrain the output: give one", field: found[1].1)
        }
        return found.first
    }

    /// `body`, the encoding of a JSON object, with the field that asks for `constraint`: for a
    /// chat, OpenAI's `response_format`; for a completion (whose OpenAI API has none),
    /// llama-server's `json_schema`; for a grammar, llama-server's `grammar` (`gbnf`: the GBNF text
    /// of a regular expression or choice, which only grammars can carry).
    public static func adding(_ constraint: OutputConstraint, gbnf: String, to body: Data, chat: Bool) -> Data {
        let field: String
        switch constraint {
        case .jsonObject:
            field = chat ? #""response_format":{"type":"json_object"}"# : #""json_schema":{"type":"object"}"#
        case .jsonSchema(let schema):
            let ordered = (try? OrderedJSON(parsing: schema))?.text ?? schema
            field = chat ? #""response_format":{"type":"json_schema","json_schema":{"name":"output","schema":"# + ordered + "}}"
                : #""json_schema":"# + ordered
        case .grammar, .regex, .choice:
            field = #""grammar":"# + OrderedJSON.string(gbnf).text
        }
        guard let close = body.lastIndex(of: UInt8(ascii: "}")) else { return body }
        let empty = body[..<close].last { ![0x20, 0x0A, 0x0D, 0x09].contains($0) } == UInt8(ascii: "{")
        return body[..<close] + Data(((empty ? "" : ",") + field + "}").utf8)
    }
}

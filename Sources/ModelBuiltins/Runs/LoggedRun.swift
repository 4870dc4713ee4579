import Display
import Evaluation
import Foundation
import LumenLanguage
import RunLog

/// One run from the log, as a value: every field of the record as a property, shown as a card.
public final class LoggedRun: HostObject {
    /// The record.
    public let record: RunRecord

    /// The properties, by name, in the order the card shows them.
    private let fields: [(String, Value)]

    public init(_ record: RunRecord) {
        self.record = record
        fields = Self.fields(of: record)
    }

    public var typeName: String { "Run" }

    private static func fields(of r: RunRecord) -> [(String, Value)] {
        var fields: [(String, Value)] = [
            ("id", .integer(Int(r.id ?? 0))), ("time", .string(Self.format(r.time))), ("kind", .string(r.kind.rawValue)), ("entry", .string(r.entry)),
            ("frontEnd", .string(r.origin.frontEnd)), ("notebook", r.origin.notebook.map(Value.string) ?? .null),
            ("cell", r.origin.cell.map(Value.string) ?? .null), ("executionCount", r.origin.executionCount.map(Value.integer) ?? .null),
            ("model", .string(r.model.name)), ("path", .string(r.model.path)), ("sha256", r.model.sha256.map(Value.string) ?? .null),
            ("architecture", .string(r.model.architecture)), ("tensorTypes", .string(r.model.tensorTypes)),
            ("baseModel", r.baseModel.map { .string($0.name) } ?? .null),
            ("prompt", .string(r.prompt)), ("renderedPrompt", r.renderedPrompt.map(Value.string) ?? .null),
            ("messages", r.messages.map { messages in .array(messages.map { message in
                var entry = LumenDictionary()
                entry[.string("role")] = .string(message.role)
                entry[.string("content")] = .string(message.content)
                return .dictionary(entry)
            }) } ?? .null),
            ("text", .string(r.output)), ("tokenIDs", .array(r.tokenIDs.map { .integer(Int($0)) })),
            ("logprobs", .array(r.logProbabilities.map { .double(Double($0)) })), ("finishReason", .string(r.finishReason)),
            ("promptTokens", .integer(r.promptTokens)), ("generatedTokens", .integer(r.generatedTokens)),
            ("promptTokensPerSecond", .double(r.promptTokensPerSecond)), ("tokensPerSecond", .double(r.tokensPerSecond)),
            ("timeToFirstToken", .double(r.timeToFirstToken)), ("interrupted", .bool(r.interrupted)),
            ("value", r.value.map(Value.double) ?? .null),
        ]
        if let options = r.options { fields.append(("options", options.value)) }
        if let figures = r.figures {
            var entry = LumenDictionary()
            for (key, value) in figures.sorted(by: { $0.key < $1.key }) { entry[.string(key)] = .double(value) }
            fields.append(("figures", .dictionary(entry)))
        }
        return fields
    }

    /// The record's fields, and `replay`.
    public var members: HostMembers {
        let fields = fields
        return HostMembers(properties: fields.map(\.0), methods: [RunLibrary.replay]) { name in fields.first { $0.0 == name }?.1 }
    }

    public var summary: String {
        "Run \(record.id ?? 0): \(record.entry) with \(record.model.name) at \(Self.format(record.time))"
    }

    public var mimeBundle: MIMEBundle {
        Table(columns: ["field", "value"], rows: fields.map { [$0.0, String($0.1.printed.prefix(400))] }).mimeBundle
    }

    /// A time as the log shows it: local, to the second.
    public static func format(_ time: Date) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: time)
    }
}

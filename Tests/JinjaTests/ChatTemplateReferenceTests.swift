import Foundation
import Jinja
import Testing

/// The 58 chat templates of `reference/templates/`, each with four conversations, against what
/// Python's jinja2 rendered (as transformers configures it): outputs compared as bytes, refusals
/// compared by jinja2's exception kind and message.
@Suite("Chat templates against jinja2")
struct ChatTemplateReferenceTests {
    static var folder: String? {
        ProcessInfo.processInfo.environment["LUMEN_TEST_DATA"].map { $0 + "/reference/templates" }
    }

    static let environment = TemplateEnvironment(now: .init(year: 2026, month: 1, day: 2, hour: 3, minute: 4, second: 5))

    /// A JSON value as a template value.
    static func value(_ json: Any) -> TemplateValue {
        switch json {
        case let text as String: .string(text)
        case let number as NSNumber: number.doubleValue == number.doubleValue.rounded() ? .int(number.intValue) : .float(number.doubleValue)
        case let array as [Any]: .list(array.map(value))
        case let object as [String: Any]: .dictionary(TemplateValue.Dictionary(object.keys.sorted().map { ($0, value(object[$0] as Any)) }))
        default: .none
        }
    }

    @Test("every template and conversation renders byte for byte as jinja2 does, refusals included")
    func everyTemplate() throws {
        let folder = try #require(Self.folder, "LUMEN_TEST_DATA must name the shared folder (make test sets it)")
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/expected.json"))
        let expected = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let conversations = try #require(expected["conversations"] as? [[String: Any]])
        let templates = try #require(expected["templates"] as? [String: [[String: Any]]])
        #expect(templates.count == 58)
        var failures: [String] = []
        for name in templates.keys.sorted() {
            let source = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
            for (index, conversation) in conversations.enumerated() {
                let reference = try #require(templates[name]?[index])
                // Messages keep their keys in the order the conversation lists them.
                let messages = (conversation["messages"] as? [[String: Any]] ?? []).map { message in
                    TemplateValue.dictionary(TemplateValue.Dictionary(["role", "content"].compactMap { key in message[key].map { (key, Self.value($0)) } }))
                }
                let variables: [String: TemplateValue] = [
                    "messages": .list(messages),
                    "add_generation_prompt": .bool(conversation["add_generation_prompt"] as? Bool ?? false),
                    "bos_token": "<BOS>", "eos_token": "<EOS>", "tools": .none,
                ]
                let outcome: Result<String, TemplateError>
                do {
                    outcome = .success(try Template(source).render(variables, environment: Self.environment))
                } catch {
                    outcome = .failure(error)
                }
                switch (outcome, reference["ok"] as? Bool) {
                case (.success(let output), true?):
                    let wanted = reference["output"] as? String ?? ""
                    if Array(output.utf8) != Array(wanted.utf8) {
                        failures.append("\(name) #\(index): output differs\n--- jinja2\n\(wanted)\n--- Lumen\n\(output)")
                    }
                case (.failure(let error), false?):
                    if error.summary != reference["error"] as? String {
                        failures.append("\(name) #\(index): error \(error.summary) instead of \(reference["error"] ?? "")")
                    }
                case (.failure(let error), _):
                    failures.append("\(name) #\(index): failed with \(error)")
                case (.success, _):
                    failures.append("\(name) #\(index): rendered, but jinja2 refused with \(reference["error"] ?? "")")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(templates.count * conversations.count) differ:\n\(failures.joined(separator: "\n\n"))")
    }
}

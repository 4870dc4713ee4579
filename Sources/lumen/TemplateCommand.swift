import ArgumentParser
import ChatTemplates
import Foundation
import GGUF
import GenerationTypes
import Inference
import Jinja
import Tokenizers

/// `lumen template MODEL_OR_TEMPLATE --messages FILE`: a conversation rendered by a chat template,
/// exactly as the model would see it.
struct TemplateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "template",
        abstract: "Render a conversation with a model's chat template (or a template file) and print the prompt.",
        discussion: """
            Prints the prompt exactly, with no newline added. When the template refuses the \
            conversation (raise_exception), prints its message and exits with status 1.
            """
    )

    @Argument(help: "A GGUF model (its tokenizer.chat_template, or the built-in format of its architecture when it has none) or a Jinja template file.")
    var source: String

    @Option(help: "A JSON file with the messages: [{\"role\": …, \"content\": …}, …].")
    var messages: String

    @Flag(help: "Leave out the prompt that starts the assistant's reply.")
    var noGenerationPrompt = false

    @Option(help: "The text of bos_token (default: the model's BOS token, or empty).")
    var bosToken: String?

    @Option(help: "The text of eos_token (default: the model's EOS token, or empty).")
    var eosToken: String?

    @Option(help: "The date and time strftime_now formats, as \"YYYY-MM-DD HH:MM:SS\" (UTC; default: now), for reproducible prompts.")
    var now: String?

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if let now, Self.dateComponents(now) == nil { throw ValidationError("--now must look like 2026-01-02 03:04:05, got \(now)") }
    }

    /// The fields of "YYYY-MM-DD HH:MM:SS".
    static func dateComponents(_ text: String) -> TemplateEnvironment.DateComponents? {
        let numbers = text.split(whereSeparator: { "-: T".contains($0) }).compactMap { Int($0) }
        guard numbers.count == 6, (1...12).contains(numbers[1]), (1...31).contains(numbers[2]),
              (0...23).contains(numbers[3]), (0...59).contains(numbers[4]), (0...60).contains(numbers[5]) else { return nil }
        return .init(year: numbers[0], month: numbers[1], day: numbers[2], hour: numbers[3], minute: numbers[4], second: numbers[5])
    }

    func run() throws {
        _ = global.bootstrapLogging(label: "lumen.template")
        let conversation = try Self.readMessages(messages)
        let template: ChatTemplate
        if Self.isGGUF(source) {
            let gguf = try GGUFFile(path: source)
            let vocabulary = try Vocabulary(gguf: gguf)
            let fromFile = try ChatTemplate(gguf: gguf, vocabulary: vocabulary)
            if let note = fromFile.origin.fallbackNote(model: source, option: "a Jinja file") {
                FileHandle.standardError.write(Data((note + "\n").utf8))
            }
            template = try ChatTemplate(source: fromFile.source, origin: fromFile.origin,
                                        bosToken: bosToken ?? fromFile.bosToken, eosToken: eosToken ?? fromFile.eosToken)
        } else {
            let text: String
            do {
                text = try String(contentsOfFile: source, encoding: .utf8)
            } catch {
                throw CommandError("cannot read \(source): \(error.localizedDescription)")
            }
            template = try ChatTemplate(source: text, bosToken: bosToken ?? "", eosToken: eosToken ?? "")
        }
        do {
            let time = now.flatMap(Self.dateComponents) ?? .utc(secondsSince1970: Int(Date().timeIntervalSince1970))
            let prompt = try template.render(conversation, addGenerationPrompt: !noGenerationPrompt, now: time)
            FileHandle.standardOutput.write(Data(prompt.utf8))
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    private static func isGGUF(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return handle.readData(ofLength: 4) == Data("GGUF".utf8)
    }

    /// The messages of a JSON file, each with a string `role` and `content`.
    static func readMessages(_ path: String) throws -> [ChatMessage] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CommandError("cannot read \(path): \(error.localizedDescription)")
        }
        guard let list = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
            throw CommandError("\(path) is not a JSON array of messages ({\"role\": …, \"content\": …})")
        }
        return try list.enumerated().map { index, message in
            guard let role = message["role"] as? String, let content = message["content"] as? String else {
                throw CommandError("\(path): message \(index) needs a string \"role\" and a string \"content\"")
            }
            return ChatMessage(role: role, content: content)
        }
    }
}

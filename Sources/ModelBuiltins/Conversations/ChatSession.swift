import ChatTemplates
import Display
import Evaluation
import Foundation
import GGUF
import Inference
import LumenLanguage
import Synchronization

/// A conversation in a cell (`conversation(m, system:)`): the messages, and what answers them —
/// for a loaded model its chat template and one session kept for it, so each turn reuses the
/// cached earlier turns and processes only its new tokens; for a remote model its server.
public final class ChatSession: MemberTableHostObject {
    /// The model it talks to.
    let model: any GenerativeModel
    /// What produces the replies.
    let engine: any ChatEngine
    private let state: Mutex<Conversation>

    init(model: any GenerativeModel, engine: any ChatEngine, conversation: Conversation) {
        self.model = model
        self.engine = engine
        state = Mutex(conversation)
    }

    /// The conversation as it is now.
    var conversation: Conversation { state.withLock { $0 } }

    /// Changes the conversation.
    func update(_ change: (inout Conversation) -> Void) {
        state.withLock { change(&$0) }
    }

    public var typeName: String { "Conversation" }
    public static let memberTable = MemberTable<ChatSession>(properties: [
        ("messages", { chat in
            .array(chat.conversation.messages.map { message in
                var entry = LumenDictionary()
                entry[.string("role")] = .string(message.role)
                entry[.string("content")] = .string(message.content)
                if let reasoning = message.reasoning { entry[.string("reasoning")] = .string(reasoning) }
                if !message.toolCalls.isEmpty { entry[.string("toolCalls")] = .array(message.toolCalls.map(ConversationLibrary.value)) }
                if let id = message.toolCallID { entry[.string("toolCallID")] = .string(id) }
                if message.isPartial { entry[.string("partial")] = .bool(true) }
                return .dictionary(entry)
            })
        }),
        ("model", { .host($0.model) }),
        ("prompt", { .rendered(Rendered(kind: "Prompt", bundle: try $0.promptBundle($0.conversation))) }),
        ("template", { $0.conversation.template.map { .string($0.source) } ?? .null }),
        ("tokens", { chat in
            let conversation = chat.conversation
            let tokenizer = try chat.model.loaded(for: "tokens").model().tokenizer
            let ids = conversation.promptTokens(tokenizer, text: try conversation.renderedPrompt())
            let rows = ids.enumerated().map { index, id in
                [String(index), String(id), tokenizer.visiblePiece(id), tokenizer.vocabulary.attributes[Int(id)].isDisjoint(with: [.control, .userDefined]) ? "" : "special"]
            }
            return .rendered(Rendered(kind: "Tokens", bundle: Table(columns: ["index", "id", "piece", "kind"], rows: rows).mimeBundle))
        }),
    ], methods: [ConversationLibrary.say, ConversationLibrary.reset, ConversationLibrary.fork])

    /// The rendered prompt of the next reply, each special token marked: `⟨<|im_start|>⟩` in
    /// text, highlighted in HTML.
    private func promptBundle(_ conversation: Conversation) throws -> MIMEBundle {
        let tokenizer = try model.loaded(for: "prompt").model().tokenizer
        let ids = conversation.promptTokens(tokenizer, text: try conversation.renderedPrompt())
        var plain = ""
        var html = "<pre style=\"white-space: pre-wrap\">"
        for id in ids {
            let attributes = tokenizer.vocabulary.attributes[Int(id)]
            if attributes.isDisjoint(with: [.control, .userDefined]) {
                let text = String(decoding: tokenizer.piece(id), as: UTF8.self)
                plain += text
                html += HTML.escape(text)
            } else {
                let text = String(decoding: tokenizer.vocabulary.text(of: id), as: UTF8.self)
                plain += "⟨" + text + "⟩"
                html += "<mark>" + HTML.escape(text) + "</mark>"
            }
        }
        return MIMEBundle(["text/plain": plain, "text/html": html + "</pre>"])
    }

    public var summary: String {
        let conversation = self.conversation
        let origin = switch conversation.template?.origin {
        case .builtin(let name)?: ", the built-in \(name) format (the model has no template)"
        case nil: ", rendered by the server"
        default: ""
        }
        return "Conversation with \(model.name): \(conversation.messages.count) messages\(origin)"
    }

    public var mimeBundle: MIMEBundle {
        let lines = conversation.messages.map { "\($0.role): \($0.content)\($0.isPartial ? " [interrupted]" : "")" }
        return .plainText(([summary] + lines).joined(separator: "\n"))
    }
}

import Display
import Evaluation
import Foundation
import GenerationTypes
import Inference
import LumenKit
import LumenLanguage
import RunLog

/// The result of `generate`: the text, each token with its log-probability, figures, and how
/// it ended.
public final class Generation: MemberTableHostObject {
    /// The prompt.
    public let prompt: String
    /// The generated text: the reply, without the reasoning before it.
    public let text: String
    /// The model's reasoning before its reply, when its chat format marks one (`<think>`,
    /// harmony's analysis channel).
    public let reasoning: String?
    /// The generated tokens.
    public let tokens: [GeneratedToken]
    /// Figures about the run.
    public let stats: GenerationSummary
    /// The options used.
    public let options: GenerationOptions
    /// Whether the run was interrupted.
    public let interrupted: Bool
    /// The tools the reply calls, when it was offered some (its text is then what it says
    /// besides).
    public let toolCalls: [ToolCall]

    init(prompt: String, text: String, reasoning: String? = nil, toolCalls: [ToolCall] = [], tokens: [GeneratedToken], stats: GenerationSummary,
         options: GenerationOptions, interrupted: Bool) {
        self.prompt = prompt
        self.text = text
        self.reasoning = reasoning
        self.toolCalls = toolCalls
        self.tokens = tokens
        self.stats = stats
        self.options = options
        self.interrupted = interrupted
    }

    public var typeName: String { "Generation" }
    public static let memberTable = MemberTable<Generation>(properties: [
        ("finishReason", { .string($0.finishReason) }),
        // Through the run log's form: each option as the decimal the user wrote (0.95, not the
        // Float's 0.949999988).
        ("options", { RunOptions($0.options).value }),
        ("prompt", { .string($0.prompt) }),
        ("reasoning", { $0.reasoning.map { .string($0) } ?? .null }),
        ("stats", { generation in
            let stats = generation.stats
            var entry = LumenDictionary()
            entry[.string("promptTokens")] = .integer(stats.promptTokens)
            entry[.string("reusedPromptTokens")] = .integer(stats.reusedPromptTokens)
            entry[.string("generatedTokens")] = .integer(stats.generatedTokens)
            entry[.string("timeToFirstToken")] = .double(stats.timeToFirstToken)
            entry[.string("promptTokensPerSecond")] = .double(stats.promptTokensPerSecond)
            entry[.string("tokensPerSecond")] = .double(stats.generationTokensPerSecond)
            if stats.draftedTokens > 0 {
                entry[.string("draftedTokens")] = .integer(stats.draftedTokens)
                entry[.string("acceptedTokens")] = .integer(stats.acceptedTokens)
            }
            return .dictionary(entry)
        }),
        ("text", { .string($0.text) }),
        ("toolCalls", { .array($0.toolCalls.map(ConversationLibrary.value)) }),
        ("tokens", { generation in
            .array(generation.tokens.map { token in
                var entry = LumenDictionary()
                entry[.string("id")] = .integer(Int(token.id))
                entry[.string("piece")] = .string(token.text)
                entry[.string("logprob")] = .double(Double(token.logProbability))
                return .dictionary(entry)
            })
        }),
    ])

    /// `length`, `eos`, `stop`, `cancelled` or `interrupted`; `toolCalls` when a reply that
    /// ended by itself called tools.
    var finishReason: String {
        interrupted ? "interrupted" : !toolCalls.isEmpty && stats.finishReason.apiName == "stop" ? "toolCalls" : stats.finishReason.rawValue
    }

    /// The reply's text, then a line for each tool it calls: `→ name({arguments})`.
    private var shownText: String {
        ([text] + toolCalls.map { "→ \($0.name)(\($0.arguments))" }).filter { !$0.isEmpty }.joined(separator: "\n")
    }

    public var summary: String { shownText + "\n" + Self.summaryLine(stats, interrupted: interrupted) }

    public var mimeBundle: MIMEBundle {
        Self.bundle(text: shownText, reasoning: reasoning, footer: Self.summaryLine(stats, interrupted: interrupted))
    }

    /// The one-line summary under a generation.
    static func summaryLine(_ stats: GenerationSummary, interrupted: Bool) -> String {
        let reused = stats.reusedPromptTokens > 0 ? "\(stats.reusedPromptTokens) of \(stats.promptTokens) prompt tokens reused · " : ""
        return String(format: "[%d tokens · %@first token %.0f ms · %.1f tok/s%@ · %@]", stats.generatedTokens, reused,
                      stats.timeToFirstToken * 1000, stats.generationTokensPerSecond, stats.draftSummary.map { " · \($0)" } ?? "",
                      interrupted ? "interrupted" : stats.finishReason.rawValue)
    }

    /// The summary line alone, shown under text that was streamed as it was generated.
    var footerBundle: MIMEBundle { Self.footer(Self.summaryLine(stats, interrupted: interrupted)) }

    /// Text with its footer, as plain text (the footer on its own line) and HTML; the reasoning
    /// before it, if any, dimmed in plain text and collapsed in HTML.
    static func bundle(text: String, reasoning: String? = nil, footer: String) -> MIMEBundle {
        let html = (reasoning.map(ReasoningDisplay.html) ?? "") + "<div style=\"white-space: pre-wrap\">\(HTML.escape(text))</div>"
            + (Self.footer(footer).data["text/html"] ?? "")
        return MIMEBundle(["text/plain": (reasoning.map(ReasoningDisplay.plain) ?? "") + text + "\n" + footer, "text/html": html])
    }

    /// A footer as plain text and HTML.
    static func footer(_ line: String) -> MIMEBundle {
        MIMEBundle(["text/plain": line, "text/html": "<div style=\"opacity: 0.65; font-size: smaller\">\(HTML.escape(line))</div>"])
    }
}

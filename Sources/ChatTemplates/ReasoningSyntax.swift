import Tokenizers

/// How a family's chat format marks a model's reasoning before its reply — Qwen 3/3.5's (and
/// DeepSeek-R1's, SmolLM3's) `<think>` blocks, gpt-oss's harmony analysis channel, Gemma 4's
/// thought channel — and the split of an output into the two, as llama.cpp's chat parsers split
/// `reasoning_content` from `content`: the output is read after the prompt's reasoning block when
/// the prompt leaves one open (a template that starts the reply inside `<think>`); reasoning
/// starts where the output (less leading white space) starts with the start marker and runs to
/// the first end marker, less its leading white space; the reply is what follows, less its
/// leading white space and any header of the reply's channel. An output that does not start with
/// reasoning is all reply, less its leading white space and header. The table of syntaxes is `all`.
/// A marker (or header) cut off at the output's end is left out, as llama.cpp's lenient parse.
public struct ReasoningSyntax: Sendable, Equatable {
    /// Its name, for messages.
    public let name: String
    /// Where reasoning starts and where it ends.
    public let start, end: String
    /// What the reply may begin with after the reasoning, in order, each left out when present
    /// (harmony's final-channel header).
    public let replyHeaders: [String]
    /// Special tokens an output must show as text for the markers to be seen (llama.cpp's
    /// `preserved_tokens`).
    public let shownTokens: [String]
    /// Text whose presence in a template's source says the template uses this syntax.
    let templateMarker: String

    /// `<think>` … `</think>`.
    public static let thinkTags = ReasoningSyntax(name: "think tags", start: "<think>", end: "</think>", replyHeaders: [],
                                                  shownTokens: ["<think>", "</think>"], templateMarker: "<think>")
    /// gpt-oss's harmony: the analysis channel, then the final channel.
    public static let harmony = ReasoningSyntax(name: "harmony", start: "<|channel|>analysis<|message|>", end: "<|end|>",
                                                replyHeaders: ["<|start|>assistant", "<|channel|>final<|message|>"],
                                                shownTokens: ["<|channel|>", "<|message|>", "<|start|>", "<|end|>", "<|constrain|>"],
                                                templateMarker: "<|channel|>")
    /// Gemma 4's thought channel.
    public static let gemma4 = ReasoningSyntax(name: "Gemma 4 thought channel", start: "<|channel>thought", end: "<channel|>", replyHeaders: [],
                                               shownTokens: ["<|channel>", "<channel|>"], templateMarker: "<|channel>thought")

    /// Every syntax, in the order a template's source is checked for them.
    public static let all: [ReasoningSyntax] = [harmony, gemma4, thinkTags]

    /// The syntax a chat template's source writes, if any.
    public static func used(byTemplate source: String) -> ReasoningSyntax? {
        all.first { source.contains($0.templateMarker) }
    }

    /// The ids of `shownTokens` in `vocabulary` (those it has as tokens).
    public func shownTokenIDs(in vocabulary: Vocabulary) -> Set<Int32> {
        Set(shownTokens.compactMap { vocabulary.id(of: Array($0.utf8)) })
    }

    /// The reasoning block `prompt` leaves open at its end (from its last start marker, when no
    /// end marker follows), or "" when it leaves none.
    func openReasoning(in prompt: String) -> Substring {
        guard let opened = prompt.range(of: start, options: .backwards), prompt[opened.upperBound...].range(of: end) == nil else {
            return ""
        }
        return prompt[opened.lowerBound...]
    }

    /// The reasoning and reply of `output` generated after a prompt that leaves `openBlock` open;
    /// the reasoning also ends where one of `endsBefore` begins (a tool call's start, as
    /// llama.cpp ends Qwen's reasoning at `<tool_call>`), which the reply then starts with.
    /// As llama.cpp's lenient parse, a marker cut off at the end of the output is in neither
    /// part, so the split of an output still growing is a prefix of each later split's.
    func split(after openBlock: Substring, output: String, endsBefore: [String] = []) -> ReasonedReply {
        let text = openBlock + output
        let trimmed = text.drop { $0.isWhitespace }
        guard trimmed.hasPrefix(start) else {
            if trimmed.isEmpty || start.hasPrefix(trimmed) { return ReasonedReply(reasoning: nil, content: "") }
            // A reply without reasoning may still open with the reply's header.
            return ReasonedReply(reasoning: nil, content: String(withoutHeaders(trimmed)))
        }
        let inside = trimmed.dropFirst(start.count).drop { $0.isWhitespace }
        // The first of the end marker (the reply after it) and the markers the reply starts with.
        let endings = [(end, true)] + endsBefore.map { ($0, false) }
        let found = endings.compactMap { marker, after in inside.range(of: marker).map { (range: $0, after: after) } }
        guard let closed = found.min(by: { $0.range.lowerBound < $1.range.lowerBound }) else {
            return ReasonedReply(reasoning: String(Self.holdingBack(endings.map(\.0), from: inside)), content: "")
        }
        let reply = closed.after ? withoutHeaders(inside[closed.range.upperBound...].drop { $0.isWhitespace }) : inside[closed.range.lowerBound...]
        return ReasonedReply(reasoning: String(inside[..<closed.range.lowerBound]), content: String(reply))
    }

    /// `output` generated after a prompt that leaves `openBlock` open, with the reasoning left in
    /// (llama.cpp's `reasoning_format: none`): from the open block, the reasoning with its markers
    /// as generated, then the reply without its channel's header.
    func inline(after openBlock: Substring, output: String) -> String {
        let text = openBlock + output
        guard text.drop(while: \.isWhitespace).hasPrefix(start), let opened = text.range(of: start) else {
            return split(after: openBlock, output: output).content
        }
        guard let closed = text.range(of: end, range: opened.upperBound..<text.endIndex) else {
            return String(Self.holdingBack([end], from: text[...]))
        }
        return String(text[..<closed.upperBound] + withoutHeaders(text[closed.upperBound...]))
    }

    /// The reply to `output` generated after a prompt that leaves `openBlock` open.
    func reply(after openBlock: Substring, output: String, inline: Bool, endsBefore: [String]) -> ReasonedReply {
        inline ? ReasonedReply(reasoning: nil, content: self.inline(after: openBlock, output: output))
            : split(after: openBlock, output: output, endsBefore: endsBefore)
    }

    /// `reply` without the reply headers it starts with, or without its start when that is only
    /// the beginning of one.
    private func withoutHeaders(_ reply: Substring) -> Substring {
        var reply = reply
        for header in replyHeaders {
            if reply.hasPrefix(header) {
                reply = reply.dropFirst(header.count).drop { $0.isWhitespace }
            } else if header.hasPrefix(reply) {
                reply = reply.dropFirst(reply.count)
            }
        }
        return reply
    }

    /// `text` without the longest ending that begins one of `markers` (which the next
    /// characters may complete).
    private static func holdingBack(_ markers: [String], from text: Substring) -> Substring {
        let longest = markers.map { marker in
            stride(from: min(marker.count - 1, text.count), to: 0, by: -1).first { marker.hasPrefix(text.suffix($0)) } ?? 0
        }.max() ?? 0
        return text.dropLast(longest)
    }
}

/// A reply split into the model's reasoning (nil when it gave none) and what it says.
public struct ReasonedReply: Sendable, Equatable {
    /// The reasoning, without its markers.
    public var reasoning: String?
    /// The reply.
    public var content: String

    /// Creates a split reply.
    public init(reasoning: String?, content: String) {
        self.reasoning = reasoning
        self.content = content
    }
}

/// Splits a growing output as it streams (or, `inline`, leaves the reasoning in the reply as
/// `ReasoningSyntax.inline` does): each call gives what the reasoning and the reply have gained
/// since the last. Once a split reply has begun, the rest is reply as it comes; without a syntax,
/// all of it is.
public struct ReasoningStream: Sendable {
    /// The syntax, if the format marks reasoning.
    public let syntax: ReasoningSyntax?
    /// Whether the reasoning stays in the reply.
    public let inline: Bool
    /// The reasoning block the prompt leaves open.
    private let openBlock: String
    /// Markers the reasoning also ends before (a tool call's starts).
    private let endsBefore: [String]
    private var output = ""
    private var shown = ReasonedReply(reasoning: nil, content: "")

    /// A stream of the output generated after `prompt`, whose reasoning also ends where one of
    /// `endsBefore` begins (the starts of a tool call, when tools are offered).
    public init(syntax: ReasoningSyntax?, prompt: String, inline: Bool = false, endsBefore: [String] = []) {
        self.syntax = syntax
        self.inline = inline
        self.endsBefore = endsBefore
        openBlock = syntax.map { String($0.openReasoning(in: prompt)) } ?? ""
    }

    /// Adds `text` to the output; returns what the reasoning and the reply gained.
    public mutating func append(_ text: String) -> (reasoning: String, content: String) {
        output += text
        guard syntax != nil, inline || shown.content.isEmpty else {
            shown.content += text
            return ("", text)
        }
        let now = reply
        defer { shown = now }
        return (Self.gain(from: shown.reasoning ?? "", to: now.reasoning ?? ""), Self.gain(from: shown.content, to: now.content))
    }

    /// The split of the whole output so far.
    public var reply: ReasonedReply { reply(to: output) }

    /// The split of `output`, a whole output after the same prompt.
    public func reply(to output: String) -> ReasonedReply {
        syntax?.reply(after: openBlock[...], output: output, inline: inline, endsBefore: endsBefore) ?? ReasonedReply(reasoning: nil, content: output)
    }

    /// What `new` adds to `old` (nothing when it does not extend it).
    private static func gain(from old: String, to new: String) -> String {
        new.hasPrefix(old) ? String(new.dropFirst(old.count)) : ""
    }
}

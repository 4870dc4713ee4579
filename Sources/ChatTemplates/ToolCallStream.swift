import Foundation
import GenerationTypes

/// Splits a reply's text from its tool calls as it streams: each call gives the text that is
/// certainly the reply's (held back from where a call may be starting) and the calls that have
/// ended since the last; `finish` gives the rest once the output has ended. The text and calls
/// given over the stream are those `ToolCallSyntax.split` gives for the whole reply.
public struct ToolCallStream: Sendable {
    /// The syntax, when the request offered tools the model may call.
    public let syntax: ToolCallSyntax?
    /// The functions offered.
    private let offered: [ToolFunction]
    private var text: [UInt8] = []
    /// Bytes of the text given as reply so far.
    private var released = 0
    /// Whether a start marker has been seen: from it on, the text is calls.
    private var inCalls = false
    private var emittedCalls = 0
    private let makeID: @Sendable () -> String

    /// A new call id as OpenAI writes them: `call_` and 24 random hexadecimal digits.
    @Sendable public static func callID() -> String {
        "call_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(24).lowercased()
    }

    /// A stream of a reply in `syntax` (nil: all text) that may call the functions `offered`;
    /// `makeID` names each call.
    public init(syntax: ToolCallSyntax?, offered: [ToolFunction], makeID: @escaping @Sendable () -> String) {
        self.syntax = offered.isEmpty ? nil : syntax
        self.offered = offered
        self.makeID = makeID
    }

    /// Adds `piece` to the reply; returns the text it certainly adds and the calls that ended.
    public mutating func append(_ piece: String) -> (content: String, calls: [ToolCall]) {
        guard let syntax else { return (piece, []) }
        text += piece.utf8
        if !inCalls {
            let candidate = syntax.candidateStart(in: text, from: released)
            let safe = candidate?.offset ?? text.count
            let content = String(decoding: text[released..<safe], as: UTF8.self)
            released = safe
            inCalls = candidate?.complete == true
            guard inCalls else { return (content, []) }
            return (content, newCalls())
        }
        // A call ends only with the last character of its end (of its JSON, without one), so
        // the reply is read again only when a piece brings one: not once per token.
        guard let last = (syntax.end.isEmpty ? "}" : syntax.end).utf8.last, piece.utf8.contains(last) else { return ("", []) }
        return ("", newCalls())
    }

    /// A whole reply's text and calls, as the stream gives them in all.
    public mutating func whole(_ reply: String) -> (content: String, calls: [ToolCall]) {
        let (before, ended) = append(reply)
        let (after, rest) = finish()
        return (before + after, ended + rest)
    }

    /// What the reply gained when the output ended: the text held back (when it held no call)
    /// and the calls not yet given.
    public mutating func finish() -> (content: String, calls: [ToolCall]) {
        guard let syntax else { return ("", []) }
        let whole = String(decoding: text, as: UTF8.self)
        let split = syntax.split(whole, offered: offered, complete: true)
        let calls = named(Array(split.calls.dropFirst(emittedCalls)))
        emittedCalls = split.calls.count
        let content = Array(split.content.utf8)
        let gained = content.count > released ? String(decoding: content[released...], as: UTF8.self) : ""
        released = max(released, content.count)
        return (gained, calls)
    }

    /// The calls that ended since the last given, while the output grows.
    private mutating func newCalls() -> [ToolCall] {
        guard let syntax else { return [] }
        // While the output grows, a call is taken only once it has ended.
        let split = syntax.split(String(decoding: text, as: UTF8.self), offered: offered, complete: false)
        guard split.calls.count > emittedCalls else { return [] }
        defer { emittedCalls = split.calls.count }
        return named(Array(split.calls[emittedCalls...]))
    }

    /// `calls`, the next ones given, each with an id of its own.
    private func named(_ calls: [ToolCall]) -> [ToolCall] {
        calls.map { call in
            var call = call
            call.id = makeID()
            return call
        }
    }
}

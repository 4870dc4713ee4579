/// Prints a reply as it streams with its reasoning apart: the reasoning dimmed (ANSI faint
/// italic, which Jupyter's streams and terminals show) and ended on a line of its own, then the
/// reply.
public struct ReasoningPrinter: Sendable {
    /// Starts and ends dimmed text.
    public static let dimOn = "\u{1B}[2;3m", dimOff = "\u{1B}[22;23m"
    /// Whether the reasoning is dimmed (not in a pipe).
    let dims: Bool
    private var inReasoning = false
    /// Whether the text printed so far ends a line (true before any).
    public private(set) var endsLine = true

    /// A printer; `dims` false leaves the reasoning undimmed.
    public init(dims: Bool = true) {
        self.dims = dims
    }

    /// The text that shows what the reasoning and then the reply gained.
    public mutating func text(reasoning: String, reply: String) -> String {
        var out = ""
        if !reasoning.isEmpty {
            if !inReasoning, dims { out += Self.dimOn }
            inReasoning = true
            out += reasoning
            endsLine = reasoning.hasSuffix("\n")
        }
        if !reply.isEmpty {
            out += finish() + reply
            endsLine = reply.hasSuffix("\n")
        }
        return out
    }

    /// The text that ends reasoning still being shown: the dimming's end and a line break.
    public mutating func finish() -> String {
        guard inReasoning else { return "" }
        inReasoning = false
        defer { endsLine = true }
        return (dims ? Self.dimOff : "") + (endsLine ? "" : "\n")
    }
}

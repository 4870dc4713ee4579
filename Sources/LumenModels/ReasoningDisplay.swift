import Display

/// How a model's reasoning is shown apart from its reply: dimmed in text (ANSI faint italic,
/// which Jupyter's streams and terminals show), collapsed in HTML.
enum ReasoningDisplay {
    /// Starts and ends dimmed text.
    static let dimOn = "\u{1B}[2;3m", dimOff = "\u{1B}[22;23m"

    /// The reasoning as plain text: dimmed, then a line break.
    static func plain(_ reasoning: String) -> String {
        dimOn + reasoning + dimOff + (reasoning.hasSuffix("\n") ? "" : "\n")
    }

    /// The reasoning as HTML: a collapsed section, its summary the reasoning's length.
    static func html(_ reasoning: String) -> String {
        "<details style=\"opacity: 0.65\"><summary>Reasoning (\(reasoning.count) characters)</summary>"
            + "<div style=\"white-space: pre-wrap; font-style: italic\">\(HTML.escape(reasoning))</div></details>"
    }
}

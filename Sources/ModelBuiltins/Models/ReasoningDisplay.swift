import ChatTemplates
import Display

/// How a model's reasoning is shown apart from its reply: dimmed in text (`ReasoningPrinter`),
/// collapsed in HTML.
enum ReasoningDisplay {
    /// The reasoning as plain text: dimmed, then a line break.
    static func plain(_ reasoning: String) -> String {
        var printer = ReasoningPrinter()
        return printer.text(reasoning: reasoning, reply: "") + printer.finish()
    }

    /// The reasoning as HTML: a collapsed section, its summary the reasoning's length.
    static func html(_ reasoning: String) -> String {
        "<details style=\"opacity: 0.65\"><summary>Reasoning (\(reasoning.count) characters)</summary>"
            + "<div style=\"white-space: pre-wrap; font-style: italic\">\(HTML.escape(reasoning))</div></details>"
    }
}

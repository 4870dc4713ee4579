import Evaluation

/// A progress bar, the one style of every front end: `label ████████░░░░░░░░░░░░ 40%` in text
/// (a cell's display in a terminal, `lumen quantize` on stderr), a `<progress>` element in HTML.
public struct ProgressBar: Sendable, Equatable {
    /// What is in progress (and how far, when counted: `3/8`).
    public let label: String
    /// How much is done, from 0 to 1.
    public let fraction: Double

    /// Creates a bar.
    public init(label: String, fraction: Double) {
        self.label = label
        self.fraction = fraction
    }

    /// The fraction done in whole percent.
    var percent: Int { Int((min(max(fraction, 0), 1) * 100).rounded()) }

    /// Twenty cells, each 5 %, then the percentage.
    public var plainText: String {
        "\(label) " + String(repeating: "█", count: percent / 5) + String(repeating: "░", count: 20 - percent / 5) + " \(percent)%"
    }

    /// Shows the bar on `output` as progress indicator `id`; `finished` once the work is done.
    public func show(on output: some OutputSink, id: String, finished: Bool = false) {
        output.progress(mimeBundle, id: id, finished: finished)
    }

    /// The bar as HTML and text.
    public var mimeBundle: MIMEBundle {
        MIMEBundle([
            "text/plain": plainText,
            "text/html": "<div>\(HTML.escape(label)) <progress value=\"\(percent)\" max=\"100\"></progress> \(percent)%</div>",
        ])
    }
}

import Evaluation
import Foundation

/// A bar or line chart of named series, rendered as SVG (axes, labels, legend) with a plain-text
/// fallback of bars. Colours work on light and dark backgrounds: text and axes use
/// `currentColor`, series use mid-tone colours.
public struct Chart: Sendable, Equatable {
    /// The kind of chart.
    public enum Kind: String, Sendable {
        case bar, line
    }

    /// A named list of values, one per label.
    public struct Series: Sendable, Equatable {
        /// The name shown in the legend.
        public var name: String
        /// One value per label.
        public var values: [Double]

        /// Creates a series.
        public init(name: String, values: [Double]) {
            self.name = name
            self.values = values
        }
    }

    /// Bar or line.
    public var kind: Kind
    /// The category (x-axis) labels.
    public var labels: [String]
    /// The series.
    public var series: [Series]
    /// The title above the chart.
    public var title: String
    /// The x-axis label.
    public var xLabel: String
    /// The y-axis label.
    public var yLabel: String

    /// Creates a chart.
    public init(kind: Kind, labels: [String], series: [Series], title: String = "", xLabel: String = "", yLabel: String = "") {
        self.kind = kind
        self.labels = labels
        self.series = series
        self.title = title
        self.xLabel = xLabel
        self.yLabel = yLabel
    }

    static let palette = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7"]

    /// The chart as SVG and text.
    public var mimeBundle: MIMEBundle {
        MIMEBundle(["image/svg+xml": svg, "text/plain": plainText])
    }

    private var valueRange: (low: Double, high: Double) {
        let values = series.flatMap(\.values).filter(\.isFinite)
        let low = min(0, values.min() ?? 0), high = max(values.max() ?? 1, low + 1e-9)
        return (low, high == low ? low + 1 : high)
    }

    /// An SVG drawing 640×360 with a title, axes with five ticks, labels and a legend.
    public var svg: String {
        let (width, height) = (640.0, 360.0)
        let (left, right, top, bottom) = (64.0, 16.0, title.isEmpty ? 16.0 : 40.0, 56.0)
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let (low, high) = valueRange
        func y(_ value: Double) -> Double { top + plotHeight * (1 - (value - low) / (high - low)) }
        func format(_ number: Double) -> String { String(format: "%.1f", number) }
        var parts = ["<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"sans-serif\" font-size=\"12\" fill=\"currentColor\">"]
        if !title.isEmpty {
            parts.append("<text x=\"\(format(width / 2))\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">\(HTML.escape(title))</text>")
        }
        for tick in 0...4 {
            let value = low + (high - low) * Double(tick) / 4
            parts.append("<line x1=\"\(format(left))\" x2=\"\(format(width - right))\" y1=\"\(format(y(value)))\" y2=\"\(format(y(value)))\" stroke=\"currentColor\" stroke-opacity=\"0.15\"/>")
            parts.append("<text x=\"\(format(left - 6))\" y=\"\(format(y(value) + 4))\" text-anchor=\"end\">\(HTML.escape(Self.tickLabel(value)))</text>")
        }
        parts.append("<line x1=\"\(format(left))\" x2=\"\(format(left))\" y1=\"\(format(top))\" y2=\"\(format(top + plotHeight))\" stroke=\"currentColor\"/>")
        parts.append("<line x1=\"\(format(left))\" x2=\"\(format(width - right))\" y1=\"\(format(y(max(low, 0))))\" y2=\"\(format(y(max(low, 0))))\" stroke=\"currentColor\"/>")
        let slot = plotWidth / Double(max(labels.count, 1))
        let labelStep = max(1, Int((Double(labels.count) * 60 / plotWidth).rounded(.up)))
        for (index, label) in labels.enumerated() where index % labelStep == 0 {
            parts.append("<text x=\"\(format(left + slot * (Double(index) + 0.5)))\" y=\"\(format(top + plotHeight + 16))\" text-anchor=\"middle\">\(HTML.escape(label))</text>")
        }
        for (seriesIndex, entry) in series.enumerated() {
            let color = Self.palette[seriesIndex % Self.palette.count]
            switch kind {
            case .bar:
                let barWidth = slot * 0.8 / Double(max(series.count, 1))
                for (index, value) in entry.values.prefix(labels.count).enumerated() where value.isFinite {
                    let x = left + slot * Double(index) + slot * 0.1 + barWidth * Double(seriesIndex)
                    let (start, end) = (y(max(value, 0)), y(min(value, 0)))
                    parts.append("<rect x=\"\(format(x))\" y=\"\(format(start))\" width=\"\(format(barWidth))\" height=\"\(format(max(end - start, 0.5)))\" fill=\"\(color)\"><title>\(HTML.escape(labels[index])): \(Self.tickLabel(value))</title></rect>")
                }
            case .line:
                let points = entry.values.prefix(labels.count).enumerated().filter { $0.element.isFinite }.map { index, value in
                    "\(format(left + slot * (Double(index) + 0.5))),\(format(y(value)))"
                }
                parts.append("<polyline points=\"\(points.joined(separator: " "))\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"/>")
            }
            if series.count > 1 || !entry.name.isEmpty {
                let legendY = height - 12
                let legendX = left + Double(seriesIndex) * 130
                parts.append("<rect x=\"\(format(legendX))\" y=\"\(format(legendY - 9))\" width=\"10\" height=\"10\" fill=\"\(color)\"/>")
                parts.append("<text x=\"\(format(legendX + 14))\" y=\"\(format(legendY))\">\(HTML.escape(entry.name))</text>")
            }
        }
        if !xLabel.isEmpty {
            parts.append("<text x=\"\(format(left + plotWidth / 2))\" y=\"\(format(height - 26))\" text-anchor=\"middle\">\(HTML.escape(xLabel))</text>")
        }
        if !yLabel.isEmpty {
            parts.append("<text transform=\"translate(14 \(format(top + plotHeight / 2))) rotate(-90)\" text-anchor=\"middle\">\(HTML.escape(yLabel))</text>")
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n")
    }

    /// Text bars: one line per label and series, scaled to 40 characters.
    public var plainText: String {
        let (low, high) = valueRange
        let width = labels.map(\.count).max() ?? 0
        var lines = title.isEmpty ? [] : [title]
        for (index, label) in labels.enumerated() {
            for entry in series where index < entry.values.count {
                let value = entry.values[index]
                let length = value.isFinite ? Int(((value - min(low, 0)) / (high - min(low, 0)) * 40).rounded()) : 0
                let name = series.count > 1 ? " \(entry.name)" : ""
                lines.append(label.padding(toLength: width, withPad: " ", startingAt: 0) + name + " " + String(repeating: "█", count: max(0, length)) + " " + Self.tickLabel(value))
            }
        }
        return lines.joined(separator: "\n")
    }

    static func tickLabel(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e15 { return String(Int(value)) }
        return abs(value) >= 100 ? String(format: "%.1f", value) : String(format: "%.3g", value)
    }
}

import Display
import Evaluation
import Foundation
import Inference
import LumenLanguage
import Tokenizers

/// A logit lens in cells (`logitLens(m, prompt)`): the top token at every (block, position),
/// shown as a table whose cells are shaded by probability (a heatmap), and, with `token:`, that
/// token's probability after each block at the last position as a chart.
final class LogitLensObject: MemberTableHostObject {
    /// The lens.
    let lens: LogitLens
    /// Each position's token, as text.
    let pieces: [String]
    /// Each predicted token's text, by id.
    let names: [Int32: String]
    /// The token followed across blocks, if any: its id and text.
    let followed: (id: Int32, text: String)?

    init(lens: LogitLens, tokenizer: Tokenizer, followed: (id: Int32, text: String)?) {
        self.lens = lens
        self.followed = followed
        func text(_ id: Int32) -> String { tokenizer.textPiece(id) }
        pieces = lens.tokens.map(text)
        names = Dictionary(lens.top.flatMap { $0.flatMap { $0.map { ($0.id, text($0.id)) } } }, uniquingKeysWith: { first, _ in first })
    }

    var typeName: String { "LogitLens" }
    static let memberTable = MemberTable<LogitLensObject>(properties: [
        ("tokens", { .array($0.pieces.map(Value.string)) }),
        ("top", { object in .array(object.lens.top.map { .array($0.map { .string(object.names[$0.first?.id ?? -1] ?? "") }) }) }),
        ("ids", { .array($0.lens.top.map { .array($0.map { .integer(Int($0.first?.id ?? -1)) }) }) }),
        ("probabilities", { .array($0.lens.top.map { .array($0.map { .double(Double($0.first?.probability ?? 0)) }) }) }),
        ("followed", { object in
            guard let followed = object.followed, let blocks = object.lens.tracked[followed.id] else { return .null }
            return .array(blocks.map { .double(Double($0.last ?? 0)) })
        }),
    ])

    /// Rows by block, columns by position: each cell's top token and its probability.
    private var table: Table {
        Table(columns: ["block"] + pieces.map { $0.debugDescription },
              rows: lens.top.enumerated().map { block, positions in
                  ["\(block)"] + positions.map { predictions in
                      predictions.first.map { "\((names[$0.id] ?? "").debugDescription) \(String(format: "%.2f", $0.probability))" } ?? ""
                  }
              })
    }

    /// The table with each cell's background as dark as its top token is likely.
    private var heatmap: String {
        let head = (["block"] + pieces.map { $0.debugDescription }).map { "<th>\(HTML.escape($0))</th>" }.joined()
        let body = lens.top.enumerated().map { block, positions in
            "<tr><th>\(block)</th>" + positions.map { predictions in
                guard let best = predictions.first else { return "<td></td>" }
                let text = (names[best.id] ?? "").debugDescription
                return "<td title=\"\(String(format: "%.4f", best.probability))\" style=\"background: rgba(78, 121, 167, \(String(format: "%.2f", best.probability)))\">\(HTML.escape(text))</td>"
            }.joined() + "</tr>"
        }.joined(separator: "\n")
        return "<table>\n<thead><tr>\(head)</tr></thead>\n<tbody>\n\(body)\n</tbody>\n</table>"
    }

    /// The followed token's probability at the last position after each block.
    private var chart: Chart? {
        guard let followed, let blocks = lens.tracked[followed.id] else { return nil }
        return Chart(kind: .line, labels: blocks.indices.map(String.init), series: [.init(name: followed.text.debugDescription, values: blocks.map { Double($0.last ?? 0) })],
                     title: "\(followed.text.debugDescription) after each block", xLabel: "block", yLabel: "probability")
    }

    var summary: String { "LogitLens(\(lens.top.count) blocks × \(pieces.count) positions)" }

    var mimeBundle: MIMEBundle {
        MIMEBundle(["text/html": heatmap + (chart?.svg ?? ""), "text/plain": table.plainText + (chart.map { "\n\n" + $0.plainText } ?? "")])
    }
}

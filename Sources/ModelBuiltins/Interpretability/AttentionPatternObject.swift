import Display
import Evaluation
import Foundation
import Inference
import LumenLanguage
import Tokenizers

/// Attention patterns in cells (`attentionPatterns(m, prompt, block:)`): for each chosen head, a
/// query × key heatmap labelled with the tokens, and the weights as values.
final class AttentionPatternObject: MemberTableHostObject {
    /// The pattern.
    let pattern: AttentionPattern
    /// The heads shown, in order.
    let heads: [Int]
    /// Each position's token, as text.
    let pieces: [String]

    init(pattern: AttentionPattern, heads: [Int], tokenizer: Tokenizer) {
        self.pattern = pattern
        self.heads = heads
        pieces = pattern.tokens.map { tokenizer.textPiece($0).debugDescription }
    }

    var typeName: String { "AttentionPattern" }
    static let memberTable = MemberTable<AttentionPatternObject>(properties: [
        ("tokens", { .array($0.pieces.map(Value.string)) }),
        ("block", { .integer($0.pattern.block) }),
        ("heads", { .array($0.heads.map(Value.integer)) }),
        ("weights", { object in
            .array(object.heads.map { head in .array(object.pattern.weights[head].map { .array($0.map { .double(Double($0)) }) }) })
        }),
    ])

    var summary: String { "AttentionPattern(block \(pattern.block), \(heads.count) heads × \(pieces.count) tokens)" }

    /// One head's heatmap: a row per query, a column per key, each cell as dark as its weight.
    private func heatmap(_ head: Int) -> String {
        let keys = pieces.map { "<th style=\"writing-mode: vertical-rl\">\(HTML.escape($0))</th>" }.joined()
        let rows = pattern.weights[head].enumerated().map { query, weights in
            "<tr><th style=\"text-align: right\">\(HTML.escape(pieces[query]))</th>" + pieces.indices.map { key in
                let weight = key < weights.count ? weights[key] : 0
                return "<td title=\"\(String(format: "%.4f", weight))\" style=\"width: 1.2em; height: 1.2em; background: rgba(78, 121, 167, \(String(format: "%.3f", weight)))\"></td>"
            }.joined() + "</tr>"
        }.joined(separator: "\n")
        return "<table><caption>block \(pattern.block), head \(head)</caption>\n<thead><tr><th></th>\(keys)</tr></thead>\n<tbody>\n\(rows)\n</tbody>\n</table>"
    }

    /// One head's weights as text, two decimals, blank above the diagonal.
    private func table(_ head: Int) -> Table {
        Table(columns: ["block \(pattern.block) head \(head)"] + pieces,
              rows: pattern.weights[head].enumerated().map { query, weights in
                  [pieces[query]] + pieces.indices.map { $0 < weights.count ? String(format: "%.2f", weights[$0]) : "" }
              })
    }

    var mimeBundle: MIMEBundle {
        MIMEBundle(["text/html": "<div style=\"display: flex; flex-wrap: wrap; gap: 1em\">" + heads.map(heatmap).joined() + "</div>",
                    "text/plain": heads.map { table($0).plainText }.joined(separator: "\n\n")])
    }
}

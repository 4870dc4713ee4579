import Evaluation

/// A table of text cells, rendered as an HTML table and as aligned plain text.
public struct Table: Sendable, Equatable {
    /// Column headings.
    public var columns: [String]
    /// Rows of cells, one per column.
    public var rows: [[String]]

    /// Creates a table; short rows are padded with empty cells.
    public init(columns: [String], rows: [[String]]) {
        self.columns = columns
        self.rows = rows.map { $0.count < columns.count ? $0 + Array(repeating: "", count: columns.count - $0.count) : Array($0.prefix(columns.count)) }
    }

    /// The table as HTML and aligned text.
    public var mimeBundle: MIMEBundle {
        MIMEBundle(["text/html": html, "text/plain": plainText])
    }

    /// An HTML `<table>` with escaped cells; numeric columns are right-aligned.
    public var html: String {
        let numeric = columns.indices.map { column in rows.allSatisfy { Double($0[column]) != nil || $0[column].isEmpty } && !rows.isEmpty }
        let head = columns.map { "<th>\(HTML.escape($0))</th>" }.joined()
        let body = rows.map { row in
            "<tr>" + row.enumerated().map { index, cell in
                numeric[index] ? "<td style=\"text-align: right\">\(HTML.escape(cell))</td>" : "<td>\(HTML.escape(cell))</td>"
            }.joined() + "</tr>"
        }.joined(separator: "\n")
        return "<table>\n<thead><tr>\(head)</tr></thead>\n<tbody>\n\(body)\n</tbody>\n</table>"
    }

    /// Columns padded to their widest cell, a rule under the headings.
    public var plainText: String { plainText(width: nil) }

    /// The narrowest a column is made to fit a width (room for two characters and `…`).
    static let narrowestColumn = 3

    /// A cell on one line: line breaks shown as `⏎`, tabs as spaces, so a row stays a row.
    static func oneLine(_ cell: String) -> String {
        guard cell.contains(where: \.isNewline) || cell.contains("\t") else { return cell }
        return cell.replacing("\r\n", with: "⏎").replacing(/[\n\r\u{0B}\u{0C}\u{85}\u{2028}\u{2029}]/, with: "⏎").replacing("\t", with: " ")
    }

    /// The aligned text, fitted to `width` characters when given: the widest columns are
    /// narrowed in turn (to no less than `narrowestColumn`) and the cells they cut end in `…`.
    /// Line breaks inside cells show as `⏎`.
    public func plainText(width: Int?) -> String {
        let columns = columns.map(Self.oneLine), rows = rows.map { $0.map(Self.oneLine) }
        var widths = columns.indices.map { column in ([columns[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0 }
        if let width {
            let separators = 2 * max(0, widths.count - 1)
            while widths.reduce(separators, +) > width, let widest = widths.indices.max(by: { widths[$0] < widths[$1] }),
                  widths[widest] > Self.narrowestColumn {
                widths[widest] -= 1
            }
        }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { cell, width in
                cell.count > width ? cell.prefix(width - 1) + "…" : cell + String(repeating: " ", count: width - cell.count)
            }
            .joined(separator: "  ").replacing(/\s+$/, with: "")
        }
        return ([line(columns), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")] + rows.map(line))
            .joined(separator: "\n")
    }

    /// A table read back from its aligned text (the rule under the headings gives the columns);
    /// nil when the text is not laid out as `plainText` lays out a table.
    public init?(plainText text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(Array.init)
        guard lines.count >= 2, !lines[1].isEmpty, lines[1].allSatisfy({ $0 == "-" || $0 == " " }), lines[1].first == "-" else { return nil }
        var spans: [Range<Int>] = []
        var start: Int?
        for (index, character) in (lines[1] + [" "]).enumerated() {
            if character == "-", start == nil { start = index }
            if character == " ", let open = start {
                spans.append(open..<index)
                start = nil
            }
        }
        func cells(_ line: [Character]) -> [String] {
            spans.enumerated().map { index, span in
                let end = index == spans.count - 1 ? line.count : min(span.upperBound, line.count)
                return span.lowerBound < end ? String(line[span.lowerBound..<end]).replacing(/\s+$/, with: "") : ""
            }
        }
        self.init(columns: cells(lines[0]), rows: lines.dropFirst(2).map(cells))
    }
}

/// HTML helpers.
public enum HTML {
    /// `text` with `&`, `<`, `>` and `"` escaped.
    public static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// A rough plain-text fallback for HTML: the text between tags.
    public static func plainText(of html: String) -> String {
        var text = ""
        var inTag = false
        for character in html {
            if character == "<" { inTag = true } else if character == ">" { inTag = false } else if !inTag { text.append(character) }
        }
        return text
    }
}

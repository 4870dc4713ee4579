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
    public var plainText: String {
        let widths = columns.indices.map { column in ([columns[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0 }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { cell, width in cell + String(repeating: " ", count: width - cell.count) }
                .joined(separator: "  ").replacing(/\s+$/, with: "")
        }
        return ([line(columns), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")] + rows.map(line))
            .joined(separator: "\n")
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

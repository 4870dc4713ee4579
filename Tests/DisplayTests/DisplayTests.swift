import Testing
@testable import Display

@Suite("Renderers")
struct DisplayTests {
    @Test("tables escape HTML, right-align numeric columns and pad short rows")
    func table() {
        let table = Table(columns: ["name", "n"], rows: [["<a>", "1"], ["b"]])
        #expect(table.html.contains("<td>&lt;a&gt;</td><td style=\"text-align: right\">1</td>"))
        #expect(table.plainText == "name  n\n----  -\n<a>   1\nb")
    }

    @Test("a wide table fits a width: its widest columns narrowed, the cells they cut ending in …")
    func fittedPlainText() {
        let long = String(repeating: "x", count: 120)
        let table = Table(columns: ["name", "note", "n"], rows: [[long, "short", "1"], ["b", long + "y", "22"]])
        let fitted = table.plainText(width: 60)
        let lines = fitted.split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { $0.count <= 60 })
        #expect(lines.count == 4)
        // Both long columns were cut to the same width; the narrow ones kept whole.
        #expect(lines[2].hasPrefix(String(repeating: "x", count: 26) + "…  short"))
        #expect(lines[3].hasPrefix("b  ") && lines[3].hasSuffix("…  22"))
        #expect(table.plainText(width: 500) == table.plainText)
        // Too narrow for every column's minimum: wide columns keep three characters, narrow ones their own.
        #expect(table.plainText(width: 5).split(separator: "\n")[1] == "---  ---  --")
    }

    @Test("line breaks inside cells show as ⏎ in the text, so every row stays one line")
    func cellsWithLineBreaks() {
        let table = Table(columns: ["prompt", "text"], rows: [["a\nb", "one\r\ntwo\n\nthree\tend"], ["c", "d"]])
        let lines = table.plainText.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4)
        #expect(lines[2] == "a⏎b     one⏎two⏎⏎three end")
        #expect(table.html.contains("<td>a\nb</td>"))
    }

    @Test("a table read back from its aligned text equals the table; other text is not a table")
    func tableFromPlainText() {
        let table = Table(columns: ["id", "piece", "probability"], rows: [["378", "\" time\"", "0.9993"], ["", "x y", ""]])
        #expect(Table(plainText: table.plainText) == table)
        #expect(Table(plainText: "just\ntext") == nil)
        #expect(Table(plainText: "[1, 2]") == nil)
    }

    @Test("a progress bar is twenty 5 % cells and the percentage, clamped to 0…100")
    func progressBar() {
        #expect(ProgressBar(label: "3/8 tensors", fraction: 3.0 / 8).plainText == "3/8 tensors " + String(repeating: "█", count: 7) + String(repeating: "░", count: 13) + " 38%")
        #expect(ProgressBar(label: "x", fraction: 1.5).plainText.hasSuffix(String(repeating: "█", count: 20) + " 100%"))
        #expect(ProgressBar(label: "x", fraction: -1).mimeBundle.data["text/html"]?.contains("value=\"0\"") == true)
    }

    @Test("bar charts draw one rect per value, line charts one polyline per series")
    func charts() {
        let bars = Chart(kind: .bar, labels: ["a", "b", "c"], series: [.init(name: "", values: [1, 2, -1])])
        #expect(bars.svg.components(separatedBy: "<rect").count - 1 == 3)
        let lines = Chart(kind: .line, labels: ["1", "2"], series: [.init(name: "p", values: [1, 2]), .init(name: "q", values: [2, 1])])
        #expect(lines.svg.components(separatedBy: "<polyline").count - 1 == 2)
        #expect(lines.svg.contains(">p</text>") && lines.svg.contains(">q</text>"))
        #expect(lines.svg.contains("fill=\"currentColor\""))
    }
}

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

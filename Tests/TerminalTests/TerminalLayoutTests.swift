import Foundation
import Testing
@testable import Terminal

@Suite("Terminal layout")
struct TerminalLayoutTests {
    /// Text whose columns the C library and Lumen must agree on: ASCII, accents written as a
    /// letter and a combining mark, CJK ideographs, emoji, and mixtures.
    static let samples = ["plain ascii", "café", "cafe\u{301}", "你好，世界", "日本語のテキスト", "😀", "tokens 😀 and 你好", "Ünïcödé",
                          "a\u{300}\u{301}\u{302}", "한국어",
                          "ｆｕｌｌｗｉｄｔｈ！", "カタカナとひらがな", "zero\u{200B}width", "〈括弧〉", "ℝ→∞ ≈ αβγ", "𠀀𠀁"]

    @Test("display width agrees with the C library's wcswidth, and escape sequences take no columns")
    func displayWidth() throws {
        // The oracle is the C library's Unicode width tables, through wcswidth (which Swift's
        // Glibc module leaves out, so it is looked up) in a UTF-8 locale.
        typealias WidthFunction = @convention(c) (UnsafePointer<wchar_t>, Int) -> Int32
        let wcswidth = unsafeBitCast(try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "wcswidth")), to: WidthFunction.self)
        let locale = try #require(newlocale(LC_CTYPE_MASK, "C.UTF-8", nil))
        defer { freelocale(locale) }
        let previous = uselocale(locale)
        defer { uselocale(previous) }
        for sample in Self.samples {
            let wide = sample.unicodeScalars.map { wchar_t(bitPattern: $0.value) } + [0]
            let expected = Int(wcswidth(wide, wide.count - 1))
            #expect(TerminalScreen.displayWidth(of: sample) == expected, "\(sample)")
            #expect(TerminalScreen.displayWidth(of: "\u{1B}[1;31m" + sample + "\u{1B}[0m\u{1B}[2K") == expected, "\(sample) in colour")
        }
    }

    @Test("rows above the end: new lines and wrapped rows count, a line exactly filling its last row does not wrap yet")
    func rowsAboveEnd() {
        #expect(TerminalScreen.rowsAboveEnd(of: "", width: 10) == 0)
        #expect(TerminalScreen.rowsAboveEnd(of: "0123456789", width: 10) == 0)
        #expect(TerminalScreen.rowsAboveEnd(of: "0123456789a", width: 10) == 1)
        #expect(TerminalScreen.rowsAboveEnd(of: "0123456789\n", width: 10) == 1)
        #expect(TerminalScreen.rowsAboveEnd(of: "a\nb\nc", width: 10) == 2)
        #expect(TerminalScreen.rowsAboveEnd(of: String(repeating: "x", count: 25) + "\nend", width: 10) == 3)
        // Wide characters take two columns: five ideographs fill a row of ten.
        #expect(TerminalScreen.rowsAboveEnd(of: "你好你好你", width: 10) == 0)
        #expect(TerminalScreen.rowsAboveEnd(of: "你好你好你好", width: 10) == 1)
    }

    @Test("completion candidates in columns: each once, down then across, within the width", arguments: [1, 5, 12, 40])
    func completionColumns(count: Int) {
        let items = (0..<count).map { "name\($0)" + String(repeating: "x", count: $0 % 7) }
        for width in [8, 30, 80] {
            let lines = LineEditor.columns(items, width: width).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            let cells = lines.map { $0.split(separator: " ").map(String.init) }
            // Reading each column top to bottom, left to right, gives the items in order.
            let columnCount = cells.map(\.count).max() ?? 0
            let readDown = (0..<columnCount).flatMap { column in cells.compactMap { column < $0.count ? $0[column] : nil } }
            #expect(readDown == items, "width \(width)")
            let widest = items.map(\.count).max() ?? 0
            #expect(lines.allSatisfy { $0.count <= max(width, widest) }, "width \(width)")
        }
    }
}

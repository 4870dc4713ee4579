import Foundation
import PythonText
import Testing

/// Python's own `repr` and `json.dumps` of floats and strings (`Tests/reference/python-text.json`,
/// made by scripts/make_python_text_references.py) against PythonText's.
@Suite("Python's text forms")
struct PythonTextTests {
    static func reference() throws -> [String: Any] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("reference/python-text.json")
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    @Test("floats: repr and json.dumps as Python writes them, whole numbers, exponents and non-finite values included")
    func floats() throws {
        let cases = try #require(try Self.reference()["floats"] as? [[String: String]])
        #expect(cases.count > 20)
        for entry in cases {
            let value = try #require(entry["hex"].flatMap(Double.init), "\(entry)")
            #expect(PythonText.repr(value) == entry["repr"], "\(entry)")
            #expect(PythonText.json(value) == entry["json"], "\(entry)")
        }
    }

    @Test("strings: repr, and json.dumps with and without ensure_ascii, quotes, unprintable characters and characters beyond the BMP included")
    func strings() throws {
        let cases = try #require(try Self.reference()["strings"] as? [[String: String]])
        #expect(cases.count > 5)
        for entry in cases {
            let text = try #require(entry["text"])
            #expect(PythonText.repr(text) == entry["repr"], "\(text.debugDescription)")
            #expect(PythonText.json(text, ensureASCII: false) == entry["json"], "\(text.debugDescription)")
            #expect(PythonText.json(text, ensureASCII: true) == entry["ascii"], "\(text.debugDescription)")
        }
    }
}

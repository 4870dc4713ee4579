import Display
import Evaluation
import Foundation
import PythonText

/// A value made to be shown: a table, a chart, HTML, Markdown or JSON.
public struct Rendered: Sendable, Equatable {
    /// The kind, shown as its type name (`Table`, `Chart`, `HTML`, …).
    public let kind: String
    /// Its representations.
    public let bundle: MIMEBundle

    /// A value of `kind` shown as `bundle`.
    public init(kind: String, bundle: MIMEBundle) {
        self.kind = kind
        self.bundle = bundle
    }
}

extension Value {
    /// The value rendered for display: rich values as themselves, arrays of dictionaries as
    /// tables, everything else as text.
    public var mimeBundle: MIMEBundle {
        switch self {
        case .rendered(let rendered):
            return rendered.bundle
        case .host(let object):
            return object.mimeBundle
        case .array(let rows) where !rows.isEmpty && rows.allSatisfy({ if case .dictionary = $0 { true } else { false } }):
            return Value.table(fromRecords: rows).mimeBundle
        default:
            return .plainText(summary)
        }
    }

    /// Collections longer than this are shown abbreviated (as NumPy abbreviates above 1000).
    static let abbreviationThreshold = 1000
    /// How many elements an abbreviated collection shows at each end.
    static let abbreviationEdgeItems = 3

    /// `description` with long collections abbreviated to their first and last elements and
    /// their count (`[0, 1, 2, … 99997, 99998, 99999] (100000 elements)`), so a cell's result
    /// stays readable; the value itself is unchanged.
    var summary: String {
        switch self {
        case .array(let elements) where elements.count > Self.abbreviationThreshold:
            let ends = Self.abbreviationEdgeItems
            let head = elements.prefix(ends).map(\.summary).joined(separator: ", ")
            let tail = elements.suffix(ends).map(\.summary).joined(separator: ", ")
            return "[\(head), … \(tail)] (\(elements.count) elements)"
        case .array(let elements):
            return "[" + elements.map(\.summary).joined(separator: ", ") + "]"
        case .dictionary(let dictionary) where !dictionary.isEmpty:
            let pairs = dictionary.pairs.map { "\($0.key.summary): \($0.value.summary)" }
            guard pairs.count > Self.abbreviationThreshold else { return "[" + pairs.joined(separator: ", ") + "]" }
            let ends = Self.abbreviationEdgeItems
            return "[\(pairs.prefix(ends).joined(separator: ", ")), … \(pairs.suffix(ends).joined(separator: ", "))] (\(pairs.count) entries)"
        default:
            return description
        }
    }

    /// A table whose columns are the records' keys, in order of first appearance.
    static func table(fromRecords rows: [Value]) -> Table {
        var columns: [Value] = []
        for case .dictionary(let record) in rows {
            for key in record.pairs.map(\.key) where !columns.contains(where: { $0.equals(key) }) { columns.append(key) }
        }
        let cells = rows.map { row -> [String] in
            guard case .dictionary(let record) = row else { return [] }
            return columns.map { record[$0]?.printed ?? "" }
        }
        return Table(columns: columns.map(\.printed), rows: cells)
    }

    /// The value as compact JSON text, dictionaries in their order (as Python's `json.dumps`
    /// keeps it), or nil when it has no JSON form (functions, infinite numbers).
    public var jsonText: String? {
        func joined(_ parts: [String?]) -> String? {
            parts.contains { $0 == nil } ? nil : parts.compactMap { $0 }.joined(separator: ",")
        }
        switch self {
        case .integer(let number): return String(number)
        case .double(let number): return number.isFinite ? PythonText.json(number) : nil
        case .bool(let flag): return flag ? "true" : "false"
        case .string(let text): return PythonText.json(text, ensureASCII: false)
        case .null: return "null"
        case .array(let elements): return joined(elements.map(\.jsonText)).map { "[" + $0 + "]" }
        case .dictionary(let dictionary):
            return joined(dictionary.pairs.map { key, value in
                value.jsonText.map { PythonText.json(key.printed, ensureASCII: false) + ":" + $0 }
            }).map { "{" + $0 + "}" }
        case .range(let lower, let upper): return "[" + (lower..<upper).map(String.init).joined(separator: ",") + "]"
        case .builtin, .function, .method, .rendered, .host: return nil
        }
    }
}

import Display
import Evaluation
import Foundation
import Inference
import LumenLanguage

/// A tensor in cells: activations a trace kept, or what arithmetic made of them. Subscripts
/// select along the first axis (`t.resid[5][-1]`: block 5's last position), `+ - * /` work
/// elementwise and broadcast a trailing shape, `sum`/`mean`/`max`/`min` reduce (over `axis:`),
/// and `norm`, `dot`, `cosine`, `topk` and `save` are its methods. Shown as a heatmap (two axes),
/// a table (one) or a summary, and as text in the terminal.
final class TensorObject: PropertyTableHostObject, ArrayHostObject {
    /// The tensor.
    let tensor: Tensor

    init(_ tensor: Tensor) {
        self.tensor = tensor
    }

    /// `tensor` as a value: a Double when it has no axes, else a Tensor.
    static func value(_ tensor: Tensor) -> Value {
        tensor.rank == 0 ? .double(Double(tensor.values[0])) : .host(TensorObject(tensor))
    }

    var typeName: String { "Tensor" }
    static let properties = PropertyTable<TensorObject>([
        ("shape", { .array($0.tensor.shape.map(Value.integer)) }),
        ("axes", { .array($0.tensor.axes.map(Value.string)) }),
        ("values", { .nested($0.tensor.values[...], shape: $0.tensor.shape[...]) }),
    ])
    var methodNames: [String] { ["norm", "dot", "cosine", "topk", "save", "sum", "mean", "max", "min"] }

    func subscripted(by index: Value, at location: SourceLocation) throws(LumenError) -> Value {
        guard let length = tensor.shape.first else { throw LumenError(.type, "a Tensor of no axes cannot be subscripted", at: location) }
        let axis = tensor.axes[0]
        switch index {
        case .integer(let position):
            guard let element = tensor.element(position) else {
                throw LumenError(.index, "index \(position) is out of range for the \(length) \(axis)s of a Tensor \(Self.shapeText(tensor))", at: location)
            }
            return Self.value(element)
        case .range(let lower, let upper):
            guard let slice = tensor.slice(lower..<upper) else {
                throw LumenError(.index, "range \(lower)..<\(upper) is out of bounds for the \(length) \(axis)s of a Tensor \(Self.shapeText(tensor))", at: location)
            }
            return .host(TensorObject(slice))
        default:
            throw LumenError(.type, "a Tensor is subscripted with an Int or a Range, not \(index.typeName)", at: location)
        }
    }

    func combined(_ operation: String, with other: Value, reversed: Bool, at location: SourceLocation) throws(LumenError) -> Value {
        let operations: [String: Tensor.Operation] = ["+": .add, "-": .subtract, "*": .multiply, "/": .divide]
        guard let elementwise = operations[operation] else {
            throw LumenError(.type, "'\(operation)' cannot be applied to a Tensor and \(other.typeName)", at: location)
        }
        if let number = Operators.number(other) {
            return Self.value(tensor.combined(elementwise, scalar: Float(number), scalarFirst: reversed))
        }
        let operand = try Self.tensor(other, at: location)
        let (left, right) = reversed ? (operand, tensor) : (tensor, operand)
        guard let result = left.combined(elementwise, right) else {
            throw LumenError(.value, "shapes \(Self.shapeText(left)) and \(Self.shapeText(right)) do not broadcast: one must end the other", at: location)
        }
        return Self.value(result)
    }

    func reduced(_ reduction: ArrayReduction, axis: Int?, at location: SourceLocation) throws(LumenError) -> Value {
        let reductions: [ArrayReduction: Tensor.Reduction] = [.sum: .sum, .mean: .mean, .max: .max, .min: .min]
        let resolved = try axis.map { axis throws(LumenError) in try Self.axis(axis, of: tensor, at: location) }
        return Self.value(tensor.reduced(reductions[reduction] ?? .sum, axis: resolved))
    }

    /// `axis` of `tensor` (negative from the end), checked.
    static func axis(_ axis: Int, of tensor: Tensor, at location: SourceLocation) throws(LumenError) -> Int {
        let resolved = axis < 0 ? tensor.rank + axis : axis
        guard tensor.shape.indices.contains(resolved) else {
            throw LumenError(.index, "axis \(axis) is not one of the \(tensor.rank) axes of a Tensor \(shapeText(tensor))", at: location)
        }
        return resolved
    }

    /// The tensor `value` stands for: a Tensor's, or a (nested) array of numbers'.
    static func tensor(_ value: Value, at location: SourceLocation) throws(LumenError) -> Tensor {
        if case .host(let object as TensorObject) = value { return object.tensor }
        if let number = Operators.number(value) { return Tensor([Float(number)], shape: []) }
        guard case .array(let elements) = value, !elements.isEmpty else {
            throw LumenError(.type, "needs a Tensor or a non-empty array of numbers, got \(value.typeName)", at: location)
        }
        let parts = try elements.map { element throws(LumenError) in try tensor(element, at: location) }
        guard parts.allSatisfy({ $0.shape == parts[0].shape }) else {
            throw LumenError(.value, "an array's elements must all have one shape to make a Tensor; they have \(Set(parts.map { shapeText($0) }).sorted().joined(separator: ", "))", at: location)
        }
        return Tensor(parts.flatMap(\.values), shape: [parts.count] + parts[0].shape)
    }

    /// `[30 × 5 × 576] (block × position × width)`.
    static func shapeText(_ tensor: Tensor) -> String {
        "[" + tensor.shape.map(String.init).joined(separator: " × ") + "]"
    }

    var summary: String {
        "Tensor \(Self.shapeText(tensor)) (\(tensor.axes.joined(separator: " × ")))"
    }

    /// The axes whose labels are text (tokens, texts): shown quoted, so a space or an empty
    /// token shows.
    private static let textAxes: Set<String> = ["position", "query", "key", "token", "text"]

    /// How the index along `axis` is shown: its label, quoted on a text axis.
    private func shownLabel(axis: Int, index: Int) -> String {
        let label = tensor.label(axis: axis, index: index)
        return tensor.labels[axis] != nil && Self.textAxes.contains(tensor.axes[axis]) ? label.debugDescription : label
    }

    private static func format(_ value: Float) -> String {
        String(format: "%.4g", Double(value))
    }

    /// Up to `limit` of the indices `0..<count`: the first ones, and the last three when cut.
    private static func shown(_ count: Int, limit: Int) -> [Int?] {
        count <= limit ? Array(0..<count) : Array(0..<(limit - 4)) + [nil] + Array((count - 3)..<count)
    }

    /// The values as NumPy prints them, cut to a screen: a row (one axis), rows labelled by the
    /// first axis (two), or the shape with its statistics (more).
    private var text: String {
        func row(_ values: ArraySlice<Float>) -> String {
            Self.shown(values.count, limit: 10).map { $0.map { Self.format(values[values.startIndex + $0]) } ?? "…" }.joined(separator: "  ")
        }
        switch tensor.rank {
        case 1: return summary + "\n" + row(tensor.values[...])
        case 2:
            let width = tensor.shape[1]
            let lines = Self.shown(tensor.shape[0], limit: 12).map { index in
                index.map { "\(shownLabel(axis: 0, index: $0)): " + row(tensor.values[($0 * width)..<(($0 + 1) * width)]) } ?? "…"
            }
            return summary + "\n" + lines.joined(separator: "\n")
        default:
            let all = tensor.values
            let mean = all.reduce(0, +) / Float(max(1, all.count))
            return summary + "\nmean \(Self.format(mean)), min \(Self.format(all.min() ?? 0)), max \(Self.format(all.max() ?? 0)), norm \(Self.format(all.reduce(0) { $0 + $1 * $1 }.squareRoot()))"
        }
    }

    /// Two axes as a heatmap: a table, each cell shaded by its value (blue above zero, red below,
    /// scaled to the largest magnitude), rows and columns labelled.
    private var heatmap: String {
        let (rows, columns) = (tensor.shape[0], tensor.shape[1])
        let largest = max(tensor.values.map(abs).max() ?? 1, .leastNormalMagnitude)
        let shownColumns = Self.shown(columns, limit: 64), shownRows = Self.shown(rows, limit: 64)
        let head = "<th></th>" + shownColumns.map { "<th>\(HTML.escape($0.map { shownLabel(axis: 1, index: $0) } ?? "…"))</th>" }.joined()
        let body = shownRows.map { row in
            guard let row else { return "<tr><th>…</th></tr>" }
            return "<tr><th>\(HTML.escape(shownLabel(axis: 0, index: row)))</th>" + shownColumns.map { column in
                guard let column else { return "<td>…</td>" }
                let value = tensor.values[row * columns + column]
                let color = value >= 0 ? "78, 121, 167" : "225, 87, 89"
                return "<td title=\"\(Self.format(value))\" style=\"background: rgba(\(color), \(String(format: "%.2f", abs(value) / largest)))\">\(Self.format(value))</td>"
            }.joined() + "</tr>"
        }.joined(separator: "\n")
        return "<p>\(HTML.escape(summary))</p>\n<table>\n<thead><tr>\(head)</tr></thead>\n<tbody>\n\(body)\n</tbody>\n</table>"
    }

    var mimeBundle: MIMEBundle {
        switch tensor.rank {
        case 1:
            let table = Table(columns: [tensor.axes[0], "value"],
                              rows: Self.shown(tensor.shape[0], limit: 40).map { index in
                                  index.map { [shownLabel(axis: 0, index: $0), Self.format(tensor.values[$0])] } ?? ["…", "…"]
                              })
            return MIMEBundle(["text/html": "<p>\(HTML.escape(summary))</p>\n" + table.html, "text/plain": text])
        case 2: return MIMEBundle(["text/html": heatmap, "text/plain": text])
        default: return .plainText(text)
        }
    }
}

extension Value {
    /// `values` with `shape` as nested arrays of Doubles (a number when the shape is empty).
    static func nested(_ values: ArraySlice<Float>, shape: ArraySlice<Int>) -> Value {
        guard let first = shape.first else { return .double(Double(values.first ?? 0)) }
        let stride = shape.dropFirst().reduce(1, *)
        return .array((0..<first).map { index in
            let start = values.startIndex + index * stride
            return nested(values[start..<(start + stride)], shape: shape.dropFirst())
        })
    }
}

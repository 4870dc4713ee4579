import Display
import Evaluation
import Foundation
import Tensors

/// A tensor in cells: activations a trace kept, or what arithmetic made of them, with NumPy's
/// semantics. Subscripts select along each axis (`t.resid[5, -1]`, `t[0..<3, ..., [2, 7]]`),
/// operators work elementwise with broadcasting (comparisons give masks), and the tensor
/// built-ins (`softmax`, `sum(axis:)`, `matmul`, `einsum`, …) are its methods too. Shown as a
/// heatmap (two axes), a table (one) or a summary, and as text in the terminal.
public final class TensorObject: MemberTableHostObject {
    /// The tensor.
    public let tensor: Tensor

    public init(_ tensor: Tensor) {
        self.tensor = tensor
    }

    /// `tensor` as a value: a Double when it has no axes, else a Tensor.
    public static func value(_ tensor: Tensor) -> Value {
        tensor.rank == 0 ? .double(Double(tensor.values[0])) : .host(TensorObject(tensor))
    }

    public var typeName: String { "Tensor" }
    public static let memberTable = MemberTable<TensorObject>(properties: [
        ("shape", { .array($0.tensor.shape.map(Value.integer)) }),
        ("axes", { .array($0.tensor.axes.map(Value.string)) }),
        ("labels", { .array($0.tensor.labels.map { $0.map { .array($0.map(Value.string)) } ?? .null }) }),
        ("values", { .nested($0.tensor.values[...], shape: $0.tensor.shape[...]) }),
        ("T", { .host(TensorObject((try? $0.tensor.transposing()) ?? $0.tensor)) }),
    ], methods: TensorLibrary.tensorMethods)

    /// The elements `index` selects: an Int (negative from the end), a Range, a partial range,
    /// an array of Ints, a Tensor of indices, or several of these (`t[0, 1..<3]`), one per axis.
    func subscripted(by index: Value, at location: SourceLocation) throws(LumenError) -> Value {
        let items: [Value]
        if case .host(let tuple as IndexTuple) = index { items = tuple.items } else { items = [index] }
        let selection = try items.map { item throws(LumenError) in try Self.axisIndex(item, at: location) }
        do {
            return Self.value(try tensor.indexed(selection))
        } catch {
            throw LumenError(.index, error.description, at: location)
        }
    }

    /// What one subscript item selects along its axis.
    private static func axisIndex(_ item: Value, at location: SourceLocation) throws(LumenError) -> AxisIndex {
        switch item {
        case .integer(let index): return .index(index)
        case .range(let lower, let upper): return .range(lower: lower, upper: upper, step: 1)
        case .host(let partial as PartialRange): return .range(lower: partial.lower, upper: partial.upper, step: 1)
        case .array(let elements):
            return .list(try elements.map { element throws(LumenError) in
                guard case .integer(let index) = element else { throw LumenError(.type, "an index list holds Ints, not \(element.typeName)", at: location) }
                return index
            })
        case .host(let object as TensorObject) where object.tensor.rank == 1:
            // Indices as argmax and topk give them: whole numbers.
            guard object.tensor.values.allSatisfy({ $0.rounded() == $0 && abs($0) < 16_777_216 }) else {
                throw LumenError(.type, "a Tensor used as indices must hold whole numbers", at: location)
            }
            return .list(object.tensor.values.map { Int($0) })
        default:
            throw LumenError(.type, "a Tensor is subscripted with Ints, ranges, index lists or `...`, not \(item.typeName)", at: location)
        }
    }

    /// `self operation other`, or `other operation self` when `reversed`, elementwise with
    /// NumPy's broadcasting; `operation` is one of `BinaryOperation.byOperator`'s.
    func combined(_ operation: String, with other: Value, reversed: Bool, at location: SourceLocation) throws(LumenError) -> Value {
        guard let elementwise = BinaryOperation.byOperator[operation] else {
            throw LumenError(.type, "'\(operation)' cannot be applied to a Tensor and \(other.typeName)", at: location)
        }
        if let number = Operators.number(other) {
            return Self.value(tensor.combined(elementwise, scalar: Float(number), scalarFirst: reversed))
        }
        let operand = try Self.tensor(other, at: location)
        let (left, right) = reversed ? (operand, tensor) : (tensor, operand)
        return Self.value(try Self.checked(location) { () throws(TensorError) in try left.combined(elementwise, right) })
    }

    /// `body`'s tensor, or its error as a `LumenError` at `location`.
    public static func checked(_ location: SourceLocation, _ body: () throws(TensorError) -> Tensor) throws(LumenError) -> Tensor {
        do {
            return try body()
        } catch {
            throw LumenError(.value, error.description, at: location)
        }
    }

    /// The most elements a range makes into a tensor (4 GiB of floats).
    static let maximumRangeLength = 1 << 30

    /// The tensor `value` stands for: a Tensor's, a number's (no axes), a non-empty range's (its
    /// integers, as NumPy's `arange`), or a (nested) array of numbers'.
    public static func tensor(_ value: Value, at location: SourceLocation) throws(LumenError) -> Tensor {
        if case .host(let object as TensorObject) = value { return object.tensor }
        if let number = Operators.number(value) { return Tensor(scalar: Float(number)) }
        if case .bool(let flag) = value { return Tensor(scalar: flag ? 1 : 0) }
        if case .range(let lower, let upper) = value, upper > lower {
            guard upper - lower <= maximumRangeLength else {
                throw LumenError(.value, "the range \(lower)..<\(upper) has \(upper - lower) elements; a Tensor is made of at most \(maximumRangeLength)", at: location)
            }
            return Tensor((lower..<upper).map(Float.init), shape: [upper - lower])
        }
        guard case .array(let elements) = value, !elements.isEmpty else {
            throw LumenError(.type, "needs a Tensor or a non-empty array of numbers, got \(value.typeName)", at: location)
        }
        // Iterative over the nesting, so that a deep array cannot exhaust the stack.
        var level: [Value] = elements, shape = [elements.count]
        while case .array(let first) = level[0] {
            var next: [Value] = []
            next.reserveCapacity(level.count * first.count)
            for element in level {
                guard case .array(let inner) = element, inner.count == first.count else {
                    throw LumenError(.value, "an array's elements must all have one shape to make a Tensor; at depth \(shape.count) they differ", at: location)
                }
                next.append(contentsOf: inner)
            }
            guard !first.isEmpty else { throw LumenError(.value, "a Tensor cannot be made of empty arrays", at: location) }
            shape.append(first.count)
            level = next
        }
        let values = try level.map { element throws(LumenError) -> Float in
            guard let number = Operators.number(element) else {
                throw LumenError(.type, "a Tensor holds numbers, not \(element.typeName)", at: location)
            }
            return Float(number)
        }
        return Tensor(values, shape: shape)
    }

    public var summary: String {
        "Tensor \(tensor.shapeText) (\(tensor.axes.joined(separator: " × ")))"
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

    /// The values as NumPy prints them, cut to a screen, columns aligned: a row (one axis), rows
    /// labelled by the first axis (two), or for more axes each matrix of the last two labelled by
    /// its indices along the others (the first three and the last), then the statistics of all.
    private var text: String {
        guard tensor.rank > 0 else { return summary + "\n" + Self.format(tensor.values.first ?? 0) }
        guard tensor.rank > 1 else { return summary + "\n" + aligned([tensor.values[...]], labels: nil).joined() }
        let (rows, width) = (tensor.shape[tensor.rank - 2], tensor.shape[tensor.rank - 1])
        let leading = Array(tensor.shape.dropLast(2)), matrices = leading.reduce(1, *)
        let shownRows = Self.shown(rows, limit: 12)
        func matrix(_ number: Int) -> [String] {
            let base = number * rows * width
            let slices = shownRows.map { row in row.map { tensor.values[(base + $0 * width)..<(base + ($0 + 1) * width)] } }
            return aligned(slices, labels: shownRows.map { row in row.map { shownLabel(axis: tensor.rank - 2, index: $0) } })
        }
        guard tensor.rank > 2 else { return ([summary] + matrix(0)).joined(separator: "\n") }
        let shownMatrices: [Int?] = matrices <= 4 ? Array(0..<matrices) : [0, 1, 2, nil, matrices - 1]
        var lines = [summary]
        for number in shownMatrices {
            guard let number else { lines.append("…"); continue }
            // The matrix's index along each leading axis, last axis fastest.
            var remainder = number, indices = [Int](repeating: 0, count: leading.count)
            for axis in stride(from: leading.count - 1, through: 0, by: -1) {
                indices[axis] = remainder % leading[axis]
                remainder /= leading[axis]
            }
            lines.append(indices.enumerated().map { "\(tensor.axes[$0.offset]) \(shownLabel(axis: $0.offset, index: $0.element))" }.joined(separator: ", ") + ":")
            lines += matrix(number).map { "  " + $0 }
        }
        let all = tensor.values
        let mean = all.reduce(0, +) / Float(max(1, all.count))
        lines.append("mean \(Self.format(mean)), min \(Self.format(all.min() ?? 0)), max \(Self.format(all.max() ?? 0)), norm \(Self.format(all.reduce(0) { $0 + $1 * $1 }.squareRoot()))")
        return lines.joined(separator: "\n")
    }

    /// Rows of values (nil: a cut, shown "…"), each cut to ten values and prefixed by its label when
    /// `labels` are given, every column as wide as its widest value.
    private func aligned(_ rows: [Slice<TensorValues>?], labels: [String?]?) -> [String] {
        let cells = rows.map { row in
            row.map { values in Self.shown(values.count, limit: 10).map { $0.map { Self.format(values[values.startIndex + $0]) } ?? "…" } }
        }
        let columns = cells.compactMap { $0?.count }.max() ?? 0
        let widths = (0..<columns).map { column in cells.compactMap { $0.map { column < $0.count ? $0[column].count : 0 } }.max() ?? 0 }
        let labelWidth = labels?.compactMap { $0?.count }.max() ?? 0
        return zip(cells, labels ?? Array(repeating: nil, count: cells.count)).map { row, label in
            guard let row else { return "…" }
            let values = row.enumerated().map { String(repeating: " ", count: widths[$0.offset] - $0.element.count) + $0.element }.joined(separator: "  ")
            guard labels != nil else { return values }
            let name = (label ?? "") + ":"
            return name + String(repeating: " ", count: labelWidth + 2 - name.count) + values
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

    /// The most features a row of feature activations shows.
    static let shownFeatures = 8

    /// Feature activations ([position][feature], as an SAE encodes them) as a table: each row's
    /// strongest features firing, index and activation, strongest first — a heatmap of thousands
    /// of columns, nearly all zero, shows nothing.
    private var featureTable: String {
        let columns = tensor.shape[1]
        let rows = Self.shown(tensor.shape[0], limit: 64).map { row -> [String] in
            guard let row else { return ["…", "…"] }
            let start = row * columns
            let firing = (0..<columns).filter { tensor.values[start + $0] > 0 }
            let strongest = firing.sorted { a, b in
                let (left, right) = (tensor.values[start + a], tensor.values[start + b])
                return left > right || (left == right && a < b)
            }.prefix(Self.shownFeatures)
            let shown = strongest.map { "\($0) (\(Self.format(tensor.values[start + $0])))" }.joined(separator: ", ")
            return [shownLabel(axis: 0, index: row), firing.count > Self.shownFeatures ? shown + ", … (\(firing.count) firing)" : shown]
        }
        return "<p>\(HTML.escape(summary))</p>\n" + Table(columns: [tensor.axes[0], "strongest features (activation)"], rows: rows).html
    }

    public var mimeBundle: MIMEBundle {
        switch tensor.rank {
        case 1:
            let table = Table(columns: [tensor.axes[0], "value"],
                              rows: Self.shown(tensor.shape[0], limit: 40).map { index in
                                  index.map { [shownLabel(axis: 0, index: $0), Self.format(tensor.values[$0])] } ?? ["…", "…"]
                              })
            return MIMEBundle(["text/html": "<p>\(HTML.escape(summary))</p>\n" + table.html, "text/plain": text])
        case 2 where tensor.axes[1] == "feature": return MIMEBundle(["text/html": featureTable, "text/plain": text])
        case 2: return MIMEBundle(["text/html": heatmap, "text/plain": text])
        default: return .plainText(text)
        }
    }
}

extension Value {
    /// `values` with `shape` as nested arrays of Doubles (a number when the shape is empty).
    static func nested(_ values: Slice<TensorValues>, shape: ArraySlice<Int>) -> Value {
        guard let first = shape.first else { return .double(Double(values.first ?? 0)) }
        let stride = shape.dropFirst().reduce(1, *)
        return .array((0..<first).map { index in
            let start = values.startIndex + index * stride
            return nested(values[start..<(start + stride)], shape: shape.dropFirst())
        })
    }
}

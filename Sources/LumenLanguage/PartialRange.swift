import Evaluation

/// A range with an open end, written in a subscript: `2...` (to the axis's end), `..<3` and
/// `...3` (from its start), `...` alone (the whole axis). Its bounds may be negative, counted
/// from the end of the axis it indexes.
public final class PartialRange: HostObject {
    /// The first index, or nil for the axis's start.
    public let lower: Int?
    /// The index after the last, or nil for the axis's end.
    public let upper: Int?

    init(lower: Int?, upper: Int?) {
        (self.lower, self.upper) = (lower, upper)
    }

    public var typeName: String { "PartialRange" }
    public var summary: String { "\(lower.map(String.init) ?? "")..<\(upper.map(String.init) ?? "")" }
    public var mimeBundle: MIMEBundle { .plainText(summary) }
    public var members: HostMembers { .none }

    /// The indices it selects of an axis of `length` (negative bounds from the end), or nil
    /// when a bound is outside the axis.
    public func indices(in length: Int) -> Range<Int>? {
        let start = lower.map { $0 < 0 ? length + $0 : $0 } ?? 0, end = upper.map { $0 < 0 ? length + $0 : $0 } ?? length
        guard 0 <= start, start <= end, end <= length else { return nil }
        return start..<end
    }
}

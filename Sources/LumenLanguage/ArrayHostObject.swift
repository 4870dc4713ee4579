/// A host object that stands for an n-dimensional array of numbers (a tensor of activations):
/// subscripts select along its first axis, `+ - * /` work elementwise with numbers and other
/// arrays, and `sum`, `mean`, `max` and `min` reduce it, over one axis when asked.
public protocol ArrayHostObject: HostObject {
    /// The element or slice at `index` (an Int, negative from the end, or a Range) of the first
    /// axis.
    func subscripted(by index: Value, at location: SourceLocation) throws(LumenError) -> Value
    /// `self operation other`, or `other operation self` when `reversed`; `operation` is one of
    /// `+ - * /`.
    func combined(_ operation: String, with other: Value, reversed: Bool, at location: SourceLocation) throws(LumenError) -> Value
    /// The `reduction` of all elements (a number), or over `axis` (an array of one axis fewer).
    func reduced(_ reduction: ArrayReduction, axis: Int?, at location: SourceLocation) throws(LumenError) -> Value
}

/// What `sum`, `mean`, `max` and `min` compute.
public enum ArrayReduction: String, Sendable {
    case sum, mean, max, min
}

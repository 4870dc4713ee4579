/// A host object that can be subscripted with an integer, like an array (`runs()[0]`, `t[-1]`),
/// iterated (`for x in …`) and, when it says how, sliced (`t[1...]`).
public protocol IndexableHostObject: HostObject {
    /// The element at `index` (0 up to `count`), or nil when the index is out of range.
    func element(at index: Int) -> Value?
    /// The number of elements.
    var count: Int { get }
    /// The elements at `range` (within 0 up to `count`) as a value of the object's kind, or nil
    /// when it cannot be sliced.
    func slice(_ range: Range<Int>) -> Value?
}

extension IndexableHostObject {
    /// Most indexable objects are not sliced.
    public func slice(_ range: Range<Int>) -> Value? { nil }
}

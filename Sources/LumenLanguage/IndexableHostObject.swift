/// A host object that can be subscripted with an integer, like an array (`runs()[0]`).
public protocol IndexableHostObject: HostObject {
    /// The element at `index`, or nil when the index is out of range.
    func element(at index: Int) -> Value?
    /// The number of elements.
    var count: Int { get }
}

import Evaluation

/// The items of a subscript of several (`t[0, 1..<3, -1]`), one per axis, as the container
/// receives them.
public final class IndexTuple: HostObject {
    /// The items, in order.
    public let items: [Value]

    init(_ items: [Value]) {
        self.items = items
    }

    public var typeName: String { "Indices" }
    public var summary: String { "Indices(" + items.map(\.description).joined(separator: ", ") + ")" }
    public var mimeBundle: MIMEBundle { .plainText(summary) }
    public var members: HostMembers { .none }
}

import Synchronization

/// Keeps a copy of the activations at chosen points and blocks of the forward passes it hooks
/// into, one row per token in the order the tokens ran.
public final class ActivationCapture: ForwardHook {
    /// One point of one block.
    public struct Site: Hashable, Sendable {
        /// The point in the block.
        public let point: ActivationPoint
        /// The block's index.
        public let block: Int
    }

    /// The points kept.
    public let points: Set<ActivationPoint>
    /// The blocks kept (nil: all).
    public let blocks: Set<Int>?
    private let captured = Mutex<[Site: [Float]]>([:])

    /// A capture of `points` in `blocks` (every block when nil).
    public init(_ points: Set<ActivationPoint>, blocks: Set<Int>? = nil) {
        self.points = points
        self.blocks = blocks
    }

    public func visits(_ point: ActivationPoint, layer: Int) -> Bool {
        points.contains(point) && blocks?.contains(layer) != false
    }

    public func visit(_ point: ActivationPoint, layer: Int, positions: Range<Int>, rows: UnsafeMutableBufferPointer<Float>, width: Int) {
        captured.withLock { $0[Site(point: point, block: layer), default: []] += rows }
    }

    /// The rows kept at `point` of `block`, one after another (empty when none were).
    public func rows(_ point: ActivationPoint, block: Int) -> [Float] {
        captured.withLock { $0[Site(point: point, block: block)] ?? [] }
    }
}

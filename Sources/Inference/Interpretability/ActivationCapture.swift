import GGUF
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
    /// The blocks kept (nil: all); the points the model has once are kept whatever they are.
    public let blocks: Set<Int>?
    /// The positions kept (nil: all).
    public let positions: Set<Int>?
    /// For attention probabilities, the model's head count and the keys kept of each head's
    /// row (nil: the whole context).
    public let attentionKeys: (heads: Int, kept: Int)?
    private let captured = Mutex<[Site: [Float]]>([:])

    /// A capture of `points` in `blocks` (every block when nil) at `positions` (every position
    /// when nil); with `attentionKeys`, each of the `heads` heads' attention rows is cut to its
    /// first `kept` keys, so a capture over a large context keeps `heads × kept` floats a token,
    /// not `heads × context length`.
    public init(_ points: Set<ActivationPoint>, blocks: Set<Int>? = nil, positions: Set<Int>? = nil, attentionKeys: (heads: Int, kept: Int)? = nil) {
        self.points = points
        self.blocks = blocks
        self.positions = positions
        self.attentionKeys = attentionKeys
    }

    public func visits(_ point: ActivationPoint, layer: Int) -> Bool {
        points.contains(point) && (!point.layout.perBlock || blocks?.contains(layer) != false)
    }

    /// Refuses to keep what some chosen blocks do not have, so a trace never holds rows that were
    /// never written: attention's points in recurrent layers, keys and values in layers that
    /// read another layer's cache, a mixture of experts' feed-forward activations; and rows of
    /// different widths together (a trace's tensor has one shape).
    public func check(_ model: LanguageModel) throws(ModelError) {
        let c = model.configuration
        let chosen = (blocks.map(Array.init) ?? Array(0..<c.blockCount)).sorted()
        func refuse(_ reason: String) -> ModelError { ModelError(file: model.gguf.path, field: "trace", reason: reason) }
        let attention = points.intersection(ActivationPoint.attentionPoints).map(\.rawValue).sorted()
        if !attention.isEmpty, let misfit = c.attentionMisfit(chosen) {
            throw refuse(misfit + ": keep \(attention.joined(separator: ", ")) of those (blocks:)")
        }
        for point in points.sorted(by: { $0.rawValue < $1.rawValue }) {
            if let misfit = c.absenceMisfit(point, blocks: chosen) { throw refuse(misfit) }
        }
        for point in points.sorted(by: { $0.rawValue < $1.rawValue }) where point.layout.perBlock && point != .attentionProbabilities {
            if let misfit = c.widthMisfit(point, blocks: chosen) { throw refuse(misfit + ": keep \(point.rawValue) of those (blocks:)") }
        }
    }

    public func visit(_ point: ActivationPoint, layer: Int, positions: Range<Int>, rows: UnsafeMutableBufferPointer<Float>, width: Int) {
        // The positions of this pass that are kept.
        let keptPositions = positions.filter { self.positions?.contains($0) != false }
        guard point == .attentionProbabilities, let (heads, kept) = attentionKeys else {
            if keptPositions.count == positions.count {
                captured.withLock { $0[Site(point: point, block: layer), default: []] += rows }
            } else {
                let picked = keptPositions.flatMap { position in rows[((position - positions.lowerBound) * width)..<((position - positions.lowerBound + 1) * width)] }
                captured.withLock { $0[Site(point: point, block: layer), default: []] += picked }
            }
            return
        }
        let stride = width / heads, keys = min(kept, stride)
        var cut = [Float](repeating: 0, count: keptPositions.count * heads * keys)
        for (index, position) in keptPositions.enumerated() {
            let row = position - positions.lowerBound
            for head in 0..<heads {
                for key in 0..<keys { cut[(index * heads + head) * keys + key] = rows[(row * heads + head) * stride + key] }
            }
        }
        captured.withLock { $0[Site(point: point, block: layer), default: []] += cut }
    }

    /// The rows kept at `point` of `block`, one after another (empty when none were).
    public func rows(_ point: ActivationPoint, block: Int) -> [Float] {
        captured.withLock { $0[Site(point: point, block: block)] ?? [] }
    }

    /// The rows kept at `point` of `block`, handed over without a copy: the capture keeps them
    /// no longer.
    public func take(_ point: ActivationPoint, block: Int) -> [Float] {
        captured.withLock { $0.removeValue(forKey: Site(point: point, block: block)) ?? [] }
    }
}

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
    /// The blocks kept (nil: all).
    public let blocks: Set<Int>?
    /// For attention probabilities, the model's head count and the keys kept of each head's
    /// row (nil: the whole context).
    public let attentionKeys: (heads: Int, kept: Int)?
    private let captured = Mutex<[Site: [Float]]>([:])

    /// A capture of `points` in `blocks` (every block when nil); with `attentionKeys`, each of
    /// the `heads` heads' attention rows is cut to its first `kept` keys, so a capture over a
    /// large context keeps `heads × kept` floats a token, not `heads × context length`.
    public init(_ points: Set<ActivationPoint>, blocks: Set<Int>? = nil, attentionKeys: (heads: Int, kept: Int)? = nil) {
        self.points = points
        self.blocks = blocks
        self.attentionKeys = attentionKeys
    }

    public func visits(_ point: ActivationPoint, layer: Int) -> Bool {
        points.contains(point) && blocks?.contains(layer) != false
    }

    /// Refuses to keep heads' outputs or attention probabilities of recurrent layers, which
    /// have none (so a trace never holds rows that were never written), and heads' outputs of
    /// layers whose heads are of other widths together (a trace's tensor has one shape).
    public func check(_ model: LanguageModel) throws(ModelError) {
        let c = model.configuration
        let chosen = (blocks.map(Array.init) ?? Array(0..<c.blockCount)).sorted()
        if points.contains(.headOutputs), let misfit = c.headWidthMisfit(chosen) {
            throw ModelError(file: model.gguf.path, field: "trace", reason: misfit + ": keep \"heads\" of those (blocks:)")
        }
        guard !points.isDisjoint(with: [.headOutputs, .attentionProbabilities]),
              let misfit = c.attentionMisfit(chosen) else { return }
        throw ModelError(file: model.gguf.path, field: "trace", reason: misfit + ": keep \"heads\" and \"attn\" of those (blocks:)")
    }

    public func visit(_ point: ActivationPoint, layer: Int, positions: Range<Int>, rows: UnsafeMutableBufferPointer<Float>, width: Int) {
        guard point == .attentionProbabilities, let (heads, kept) = attentionKeys else {
            captured.withLock { $0[Site(point: point, block: layer), default: []] += rows }
            return
        }
        let stride = width / heads, keys = min(kept, stride)
        var cut = [Float](repeating: 0, count: positions.count * heads * keys)
        for row in 0..<positions.count * heads {
            for key in 0..<keys { cut[row * keys + key] = rows[row * stride + key] }
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

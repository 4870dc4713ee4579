import Foundation
import Tensors

/// What a trace keeps of a run (`lumen trace`, `trace(m, prompt, keep:)` in cells): some points
/// of some blocks, with what that costs known before the run, and the captured rows arranged as
/// tensors after it.
public struct ActivationTrace: Sendable {
    /// The points kept, in the order shown.
    public let points: [ActivationPoint]
    /// The blocks kept, ascending.
    public let blocks: [Int]
    /// The model's shape.
    public let configuration: ModelConfiguration

    /// A trace of `points` at `blocks` (each of the model's blocks, checked by the caller).
    public init(points: [ActivationPoint], blocks: [Int], configuration: ModelConfiguration) {
        self.points = points
        self.blocks = blocks
        self.configuration = configuration
    }

    /// The floats each kept block holds at `point` for a run of `tokens` tokens.
    private func floats(_ point: ActivationPoint, tokens: Int) -> Int {
        // Attention keeps each head's row over the run's keys, not over the whole cache.
        tokens * (point == .attentionProbabilities ? configuration.headCount * tokens : point.width(in: configuration, contextLength: 0))
    }

    /// The bytes the trace keeps for a run of `tokens` tokens.
    public func bytes(tokens: Int) -> Int {
        4 * blocks.count * points.reduce(0) { $0 + floats($1, tokens: tokens) }
    }

    /// What the trace keeps for a run of `tokens` tokens, point by point: "resid 30 blocks ×
    /// 12 × 576 floats (0.8 MiB), attn 30 blocks × 9 heads × 12 × 12 floats (0.2 MiB)".
    public func cost(tokens: Int) -> String {
        points.map { point in
            let shape = switch point {
            case .attentionProbabilities: "\(configuration.headCount) heads × \(tokens) × \(tokens)"
            case .headOutputs: "\(tokens) × \(configuration.headCount) heads × \(configuration.headDimension)"
            default: "\(tokens) × \(point.width(in: configuration, contextLength: 0))"
            }
            return "\(point.rawValue) \(blocks.count) blocks × \(shape) floats (\(Self.size(4 * blocks.count * floats(point, tokens: tokens))))"
        }.joined(separator: ", ")
    }

    /// `bytes` in bytes, KiB, MiB or GiB.
    public static func size(_ bytes: Int) -> String {
        guard bytes >= 1 << 10 else { return "\(bytes) bytes" }
        let (unit, name) = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")].first { bytes >= $0.0 } ?? (1 << 10, "KiB")
        return String(format: "%.1f %@", Double(bytes) / Double(unit), name)
    }

    /// The hook that captures what the trace keeps, for a run of at most `tokens` tokens.
    public func capture(tokens: Int) -> ActivationCapture {
        ActivationCapture(Set(points), blocks: Set(blocks), attentionKeys: (configuration.headCount, tokens))
    }

    /// The captured rows as one tensor per point (taken from `capture`, which keeps them no
    /// longer), `labels` naming the run's positions:
    /// `resid`, `attn_out`, `ffn_out` `[block][position][width]`, `heads`
    /// `[block][position][head][head dimension]`, `attn` `[block][head][query][key]`.
    public func tensors(from capture: ActivationCapture, labels: [String]) -> [ActivationPoint: Tensor] {
        let c = configuration, blockLabels = blocks.map(String.init)
        var tensors: [ActivationPoint: Tensor] = [:]
        for point in points {
            switch point {
            case .attentionProbabilities:
                // Captured as [position][head][key], each row cut to the run's longest length.
                let perBlock = blocks.map { capture.take(point, block: $0) }
                let heads = c.headCount, kept = capture.attentionKeys?.kept ?? 0
                let count = (perBlock.first?.count ?? 0) / max(1, heads * kept)
                var values = [Float](repeating: 0, count: blocks.count * heads * count * count)
                for (index, rows) in perBlock.enumerated() {
                    for query in 0..<count {
                        for head in 0..<heads {
                            for key in 0...query {
                                values[((index * heads + head) * count + query) * count + key] = rows[(query * heads + head) * kept + key]
                            }
                        }
                    }
                }
                let names = Array(labels.prefix(count))
                tensors[point] = Tensor(values, shape: [blocks.count, heads, count, count], axes: ["block", "head", "query", "key"],
                                        labels: [blockLabels, nil, names, names])
            case .headOutputs:
                let values = Self.joined(blocks.map { capture.take(point, block: $0) })
                let count = values.count / max(1, blocks.count * c.queryDimension)
                tensors[point] = Tensor(values, shape: [blocks.count, count, c.headCount, c.headDimension],
                                        axes: ["block", "position", "head", "width"], labels: [blockLabels, Array(labels.prefix(count)), nil, nil])
            case .blockOutput, .attentionOutput, .feedForwardOutput:
                let values = Self.joined(blocks.map { capture.take(point, block: $0) })
                let count = values.count / max(1, blocks.count * c.embeddingLength)
                tensors[point] = Tensor(values, shape: [blocks.count, count, c.embeddingLength],
                                        axes: ["block", "position", "width"], labels: [blockLabels, Array(labels.prefix(count)), nil])
            }
        }
        return tensors
    }

    /// `parts` one after another, the first handed on without a copy when it is the only one.
    private static func joined(_ parts: [[Float]]) -> [Float] {
        guard parts.count > 1 else { return parts.first ?? [] }
        var values = [Float]()
        values.reserveCapacity(parts.reduce(0) { $0 + $1.count })
        for part in parts { values += part }
        return values
    }
}

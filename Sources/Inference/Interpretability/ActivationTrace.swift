import Foundation
import Tensors

/// What a trace keeps of a run (`lumen trace`, `trace(m, prompt, keep:)` in cells): some points
/// of some blocks at some positions, with what that costs known before the run, and the captured
/// rows arranged as tensors after it.
public struct ActivationTrace: Sendable {
    /// The points kept, in the order shown.
    public let points: [ActivationPoint]
    /// The blocks kept, ascending.
    public let blocks: [Int]
    /// The positions kept, ascending (nil: every position of the run).
    public let positions: [Int]?
    /// The model's shape.
    public let configuration: ModelConfiguration

    /// A trace of `points` at `blocks` (each of the model's blocks, checked by the caller) and
    /// `positions` (nil: all; each within the run, checked by the caller).
    public init(points: [ActivationPoint], blocks: [Int], positions: [Int]? = nil, configuration: ModelConfiguration) {
        self.points = points
        self.blocks = blocks
        self.positions = positions
        self.configuration = configuration
    }

    /// The blocks a point is kept at: the trace's, or one (counted as block 0) for the points
    /// the model has once.
    private func blockCount(_ point: ActivationPoint) -> Int {
        point.layout.perBlock ? blocks.count : 1
    }

    /// The positions kept of a run of `tokens` tokens.
    private func kept(tokens: Int) -> Int {
        positions?.filter { $0 < tokens }.count ?? tokens
    }

    /// The floats kept at `point` for a run of `tokens` tokens.
    public func floats(_ point: ActivationPoint, tokens: Int) -> Int {
        // Attention keeps each head's row over the run's keys, not over the whole cache.
        let row = point == .attentionProbabilities ? configuration.headCount * tokens : point.width(in: configuration, layer: blocks.first ?? 0, contextLength: 0)
        return blockCount(point) * kept(tokens: tokens) * row
    }

    /// The bytes the trace keeps for a run of `tokens` tokens.
    public func bytes(tokens: Int) -> Int {
        4 * points.reduce(0) { $0 + floats($1, tokens: tokens) }
    }

    /// The shape `point`'s tensor has for a run of `tokens` tokens.
    public func shape(_ point: ActivationPoint, tokens: Int) -> [Int] {
        let count = kept(tokens: tokens)
        if point == .attentionProbabilities { return [blocks.count, configuration.headCount, count, tokens] }
        let row = point.layout.rowShape(configuration.layer(blocks.first ?? 0))
        return (point.layout.perBlock ? [blocks.count] : []) + [count] + row
    }

    /// What `point` keeps for a run of `tokens` tokens: "resid_post [30 × 12 × 576] (0.8 MiB)".
    public func cost(_ point: ActivationPoint, tokens: Int) -> String {
        "\(point.rawValue) [\(shape(point, tokens: tokens).map(String.init).joined(separator: " × "))] (\(Self.size(4 * floats(point, tokens: tokens))))"
    }

    /// What the trace keeps for a run of `tokens` tokens, point by point.
    public func cost(tokens: Int) -> String {
        points.map { cost($0, tokens: tokens) }.joined(separator: ", ")
    }

    /// `bytes` in bytes, KiB, MiB or GiB.
    public static func size(_ bytes: Int) -> String {
        guard bytes >= 1 << 10 else { return "\(bytes) bytes" }
        let (unit, name) = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")].first { bytes >= $0.0 } ?? (1 << 10, "KiB")
        return String(format: "%.1f %@", Double(bytes) / Double(unit), name)
    }

    /// The hook that captures what the trace keeps, for a run of at most `tokens` tokens.
    public func capture(tokens: Int) -> ActivationCapture {
        ActivationCapture(Set(points), blocks: Set(blocks), positions: positions.map(Set.init), attentionKeys: (configuration.headCount, tokens))
    }

    /// The captured rows as one tensor per point (taken from `capture`, which keeps them no
    /// longer), `labels` naming the run's positions (indices when absent). Per-block points are `[block][position]`
    /// then the row's axes (`q` `[block][position][head][width]`), the points the model has
    /// once `[position]` then the row's (`logits` `[position][token]`), and `pattern`
    /// `[block][head][query][key]`.
    public func tensors(from capture: ActivationCapture, labels: [String]) -> [ActivationPoint: Tensor] {
        let c = configuration, blockLabels = blocks.map(String.init)
        // A position without a label (none given) is labelled by its index.
        let label = { (position: Int) in position < labels.count ? labels[position] : String(position) }
        var tensors: [ActivationPoint: Tensor] = [:]
        for point in points {
            if point == .attentionProbabilities {
                // Captured as [position][head][key], each row cut to the run's longest length.
                let perBlock = blocks.map { capture.take(point, block: $0) }
                let heads = c.headCount, keys = capture.attentionKeys?.kept ?? 0
                let queries = (perBlock.first?.count ?? 0) / max(1, heads * keys)
                let queryPositions = Array((positions ?? Array(0..<queries)).prefix(queries))
                let length = (queryPositions.last ?? -1) + 1
                var values = [Float](repeating: 0, count: blocks.count * heads * queries * length)
                for (index, rows) in perBlock.enumerated() {
                    for (query, position) in queryPositions.enumerated() {
                        for head in 0..<heads {
                            for key in 0...position {
                                values[((index * heads + head) * queries + query) * length + key] = rows[(query * heads + head) * keys + key]
                            }
                        }
                    }
                }
                tensors[point] = Tensor(values, shape: [blocks.count, heads, queries, length], axes: ["block", "head", "query", "key"],
                                        labels: [blockLabels, nil, queryPositions.map(label), (0..<length).map(label)])
                continue
            }
            let perBlock = point.layout.perBlock
            let values = Self.joined((perBlock ? blocks : [0]).map { capture.take(point, block: $0) })
            let row = point.layout.rowShape(c.layer(blocks.first ?? 0))
            let count = values.count / max(1, (perBlock ? blocks.count : 1) * row.reduce(1, *))
            let positionLabels = Array((positions ?? Array(0..<count)).prefix(count)).map(label)
            let rowLabels: [[String]?] = row.map { _ in nil }
            tensors[point] = perBlock
                ? Tensor(values, shape: [blocks.count, count] + row, axes: ["block", "position"] + point.layout.rowAxes, labels: [blockLabels, positionLabels] + rowLabels)
                : Tensor(values, shape: [count] + row, axes: ["position"] + point.layout.rowAxes, labels: [positionLabels] + rowLabels)
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

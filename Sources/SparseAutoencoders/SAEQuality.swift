import GGUF
import Inference
import Synchronization
import Tensors

/// How well an SAE reconstructs a model's activations over a text, as SAELens' evals measure it:
/// at the positions measured (the BOS position left out, as SAELens leaves out special tokens),
/// the mean squared error (summed over the row, averaged over positions), the explained variance,
/// the mean number of features firing (L0), and the next-token cross-entropy of the clean run, of
/// the run with the hook's activations replaced by the SAE's reconstruction (`SAESplice`), and of
/// the run with them zeroed; the loss score is how much of the zeroing's loss the SAE recovers.
public struct SAEQuality: Sendable, Equatable {
    /// The positions whose activations were measured.
    public var positions: Int
    /// E‖x − x̂‖².
    public var meanSquaredError: Double
    /// 1 − E‖x − x̂‖² / (E‖x‖² − ‖E x‖²).
    public var explainedVariance: Double
    /// The mean number of features firing (not 0).
    public var l0: Double
    /// The mean next-token cross-entropy (nats) of the clean run.
    public var cleanLoss: Double
    /// The same with the SAE spliced in.
    public var splicedLoss: Double
    /// The same with the hook's activations zeroed.
    public var ablatedLoss: Double

    /// SAELens' `ce_loss_score`: (ablated − spliced) / (ablated − clean); 1 when the SAE loses
    /// nothing, 0 when it is as bad as zeroing.
    public var lossScore: Double { (ablatedLoss - splicedLoss) / (ablatedLoss - cleanLoss) }
}

extension ModelSession {
    /// Measures `sae` over `tokens` (a text's, starting with BOS where the model adds one): three
    /// passes over them, each from an empty cache. The positions holding `excluded` tokens (BOS)
    /// are left out of every measure.
    ///
    /// - Throws: `ModelError` when the SAE does not fit the model, the tokens do not fit the
    ///   context or are fewer than two, or the task is cancelled.
    public func quality(of sae: SparseAutoencoder, tokens: [Int32], excluded: Set<Int32>) throws(ModelError) -> SAEQuality {
        try sae.check(fits: model.configuration, file: model.gguf.path)
        guard tokens.count >= 2 else {
            throw ModelError(file: model.gguf.path, field: "text", reason: "has \(tokens.count) token; the loss needs at least two")
        }
        let measured = Set(tokens.indices.filter { !excluded.contains(tokens[$0]) })
        let activations = ReconstructionMeter(sae: sae, positions: measured)
        let losses = (0..<3).map { _ in LossMeter(tokens: tokens, positions: measured) }
        _ = try evaluate(tokens, hooks: [activations, losses[0]])
        _ = try evaluate(tokens, hooks: [SAESplice(sae), losses[1]])
        _ = try evaluate(tokens, hooks: [ActivationEdit.zeroing(sae.point, block: sae.block ?? 0), losses[2]])
        let sums = activations.sums.withLock { $0 }
        let count = Double(max(1, sums.count))
        let meanSquaredNorm = sums.squaredNorms / count
        let meanNormSquared = sums.total.reduce(0) { $0 + ($1 / count) * ($1 / count) }
        let meanSquaredError = sums.squaredErrors / count
        return SAEQuality(positions: sums.count, meanSquaredError: meanSquaredError,
                          explainedVariance: 1 - meanSquaredError / (meanSquaredNorm - meanNormSquared), l0: sums.firing / count,
                          cleanLoss: losses[0].mean, splicedLoss: losses[1].mean, ablatedLoss: losses[2].mean)
    }
}

/// Sums, over the positions measured, what the reconstruction metrics need.
final class ReconstructionMeter: SiteHook {
    struct Sums {
        var count = 0
        /// Σ x, per element of the row, in double precision (the variance is a difference of
        /// two large nearly equal numbers).
        var total: [Double] = []
        var squaredNorms = 0.0
        var squaredErrors = 0.0
        var firing = 0.0
    }

    let sae: SparseAutoencoder
    let positions: Set<Int>
    let sums = Mutex(Sums())
    var point: ActivationPoint { sae.point }
    var block: Int { sae.block ?? 0 }

    init(sae: SparseAutoencoder, positions: Set<Int>) {
        self.sae = sae
        self.positions = positions
    }

    func visit(_ point: ActivationPoint, layer: Int, positions range: Range<Int>, rows: UnsafeMutableBufferPointer<Float>, width: Int) {
        let input = Tensor(Array(rows), shape: [range.count, width])
        guard let features = try? sae.encode(input), let reconstruction = try? sae.decode(features) else { return }
        sums.withLock { sums in
            if sums.total.isEmpty { sums.total = Array(repeating: 0, count: width) }
            for (row, position) in range.enumerated() where positions.contains(position) {
                sums.count += 1
                for column in 0..<width {
                    let x = Double(input.values[row * width + column]), error = x - Double(reconstruction.values[row * width + column])
                    sums.total[column] += x
                    sums.squaredNorms += x * x
                    sums.squaredErrors += error * error
                }
                sums.firing += Double(features.values[(row * sae.featureCount)..<((row + 1) * sae.featureCount)].count { $0 != 0 })
            }
        }
    }
}

/// The mean next-token cross-entropy of a run over `tokens`, at the positions measured that
/// have a next token.
final class LossMeter: ForwardHook {
    let tokens: [Int32]
    let positions: Set<Int>
    private let sums = Mutex((loss: 0.0, count: 0))

    init(tokens: [Int32], positions: Set<Int>) {
        self.tokens = tokens
        self.positions = positions
    }

    /// The mean loss (nats).
    var mean: Double { sums.withLock { $0.loss / Double(max(1, $0.count)) } }

    func visits(_ point: ActivationPoint, layer: Int) -> Bool { point == .logits }

    func visit(_ point: ActivationPoint, layer: Int, positions range: Range<Int>, rows: UnsafeMutableBufferPointer<Float>, width: Int) {
        for (row, position) in range.enumerated() where position + 1 < tokens.count && positions.contains(position) {
            let logits = UnsafeBufferPointer(rebasing: rows[(row * width)..<((row + 1) * width)])
            let loss = Double(LogSoftmax.logNormalizer(logits) - logits[Int(tokens[position + 1])])
            sums.withLock { $0.loss += loss; $0.count += 1 }
        }
    }
}

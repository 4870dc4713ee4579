import Foundation

/// The statistics llama-perplexity's `--kl-divergence` prints for a model against a base model,
/// from their token-by-token divergences: perplexity of both, KL divergence, the change in the
/// probability of the actual token (Δp) and how often both put the same token first.
public struct DivergenceSummary: Sendable {
    /// A quantile of a sorted sample: its label in llama-perplexity's report and its fraction.
    public struct Quantile: Sendable {
        /// The label ("Maximum", "99.9%", "Median", …).
        public let label: String
        /// The fraction of the sample below it.
        public let fraction: Double
    }

    /// The quantiles reported for KL divergence.
    public static let klQuantiles = quantiles([1, 0.999, 0.99, 0.95, 0.9, 0.5, 0.1, 0.05, 0.01, 0.001, 0])
    /// The quantiles reported for Δp.
    public static let probabilityQuantiles = quantiles([1, 0.999, 0.99, 0.95, 0.9, 0.75, 0.5, 0.25, 0.1, 0.05, 0.01, 0.001, 0])

    /// The number of tokens compared.
    public let count: Int
    /// The model's perplexity.
    public let perplexity: Estimate
    /// The base model's perplexity.
    public let basePerplexity: Estimate
    /// The correlation of the two models' per-token log-likelihoods.
    public let logPerplexityCorrelation: Double
    /// ln(PPL(model) / PPL(base)).
    public let logPerplexityRatio: Estimate
    /// PPL(model) / PPL(base).
    public let perplexityRatio: Estimate
    /// PPL(model) − PPL(base).
    public let perplexityDifference: Estimate
    /// The mean KL divergence per token, in nats.
    public let meanKLDivergence: Estimate
    /// KL divergence at each of `klQuantiles`.
    public let klDivergenceQuantiles: [Double]
    /// The mean change in the actual token's probability.
    public let meanProbabilityDifference: Estimate
    /// Δp at each of `probabilityQuantiles`.
    public let probabilityDifferenceQuantiles: [Double]
    /// The root mean square of Δp.
    public let rmsProbabilityDifference: Estimate
    /// The fraction of tokens where both models put the same token first.
    public let sameTop: Estimate
    /// Every token's KL divergence, in the order of the text.
    public let klDivergences: [Double]

    /// Summarizes `tokens` (at least two).
    public init(_ tokens: [TokenDivergence]) {
        let n = tokens.count
        func sum(_ value: (TokenDivergence) -> Double) -> Double { tokens.reduce(0) { $0 + value($1) } }
        func mean(_ value: (TokenDivergence) -> Double) -> Estimate {
            Estimate(sum: sum(value), sumOfSquares: sum { value($0) * value($0) }, count: n)
        }
        count = n
        let logPerplexity = mean(\.negativeLogLikelihood)
        let baseLogPerplexity = mean(\.baseNegativeLogLikelihood)
        let covariance = n < 10 ? 0 : (sum { $0.negativeLogLikelihood * $0.baseNegativeLogLikelihood } / Double(n)
            - logPerplexity.value * baseLogPerplexity.value) / Double(n - 1)
        perplexity = Estimate(value: exp(logPerplexity.value), uncertainty: exp(logPerplexity.value) * logPerplexity.uncertainty)
        basePerplexity = Estimate(value: exp(baseLogPerplexity.value), uncertainty: exp(baseLogPerplexity.value) * baseLogPerplexity.uncertainty)
        logPerplexityCorrelation = covariance / (logPerplexity.uncertainty * baseLogPerplexity.uncertainty)
        let ratioUncertainty = (logPerplexity.uncertainty * logPerplexity.uncertainty
            + baseLogPerplexity.uncertainty * baseLogPerplexity.uncertainty - 2 * covariance).squareRoot()
        logPerplexityRatio = Estimate(value: logPerplexity.value - baseLogPerplexity.value, uncertainty: ratioUncertainty)
        let ratio = exp(logPerplexityRatio.value)
        perplexityRatio = Estimate(value: ratio, uncertainty: ratio * ratioUncertainty)
        let perplexityCovariance = perplexity.value * basePerplexity.value * covariance
        perplexityDifference = Estimate(value: perplexity.value - basePerplexity.value,
                                        uncertainty: (perplexity.uncertainty * perplexity.uncertainty + basePerplexity.uncertainty * basePerplexity.uncertainty
                                            - 2 * perplexityCovariance).squareRoot())
        meanKLDivergence = mean(\.klDivergence)
        klDivergences = tokens.map(\.klDivergence)
        klDivergenceQuantiles = Self.values(at: Self.klQuantiles, of: klDivergences.sorted())
        meanProbabilityDifference = mean(\.probabilityDifference)
        probabilityDifferenceQuantiles = Self.values(at: Self.probabilityQuantiles, of: tokens.map(\.probabilityDifference).sorted())
        let squared = Estimate(sum: sum { pow($0.probabilityDifference, 2) }, sumOfSquares: sum { pow($0.probabilityDifference, 4) }, count: n)
        let rms = squared.value.squareRoot()
        rmsProbabilityDifference = Estimate(value: rms, uncertainty: rms > 0 ? 0.5 / rms * squared.uncertainty : 0)
        let same = n > 0 ? Double(tokens.count { $0.sameTop }) / Double(n) : 0
        sameTop = Estimate(value: same, uncertainty: n > 1 ? (same * (1 - same) / Double(n - 1)).squareRoot() : 0)
    }

    /// The figures by name, as `compareModels`' value and the run log give them.
    public var figures: [String: Double] {
        func quantile(_ label: String) -> Double {
            zip(Self.klQuantiles, klDivergenceQuantiles).first { $0.0.label == label }?.1 ?? .nan
        }
        return ["meanKL": meanKLDivergence.value, "medianKL": quantile("Median"), "p99KL": quantile("99.0%"), "maxKL": quantile("Maximum"),
                "sameTop": sameTop.value, "meanDeltaP": meanProbabilityDifference.value,
                "rmsDeltaP": rmsProbabilityDifference.value, "perplexity": perplexity.value,
                "basePerplexity": basePerplexity.value, "tokens": Double(count)]
    }

    /// The report in llama-perplexity's words and number formats.
    public var report: String {
        func line(_ label: String, _ estimate: Estimate, scale: Double = 1) -> String {
            String(format: "%@: %10.6f ± %10.6f", label, scale * estimate.value, scale * estimate.uncertainty)
        }
        var lines = ["====== Perplexity statistics ======",
                     line("Mean PPL(Q)                   ", perplexity),
                     line("Mean PPL(base)                ", basePerplexity),
                     String(format: "Cor(ln(PPL(Q)), ln(PPL(base))): %6.2f%%", 100 * logPerplexityCorrelation),
                     line("Mean ln(PPL(Q)/PPL(base))     ", logPerplexityRatio),
                     line("Mean PPL(Q)/PPL(base)         ", perplexityRatio),
                     line("Mean PPL(Q)-PPL(base)         ", perplexityDifference),
                     "",
                     "====== KL divergence statistics ======",
                     line("Mean    KLD", meanKLDivergence)]
        for (quantile, value) in zip(Self.klQuantiles, klDivergenceQuantiles) {
            lines.append(String(format: "%@ KLD: %10.6f", quantile.label.padding(toLength: 7, withPad: " ", startingAt: 0), value))
        }
        lines += ["", "====== Token probability statistics ======",
                  String(format: "Mean    Δp: %6.3f ± %5.3f %%", 100 * meanProbabilityDifference.value, 100 * meanProbabilityDifference.uncertainty)]
        for (quantile, value) in zip(Self.probabilityQuantiles, probabilityDifferenceQuantiles) {
            lines.append(String(format: "%@ Δp: %6.3f%%", quantile.label.padding(toLength: 7, withPad: " ", startingAt: 0), 100 * value))
        }
        lines.append(String(format: "RMS Δp    : %6.3f ± %5.3f %%", 100 * rmsProbabilityDifference.value, 100 * rmsProbabilityDifference.uncertainty))
        lines.append(String(format: "Same top p: %6.3f ± %5.3f %%", 100 * sameTop.value, 100 * sameTop.uncertainty))
        return lines.joined(separator: "\n")
    }

    private static func quantiles(_ fractions: [Double]) -> [Quantile] {
        fractions.map { fraction in
            let label = switch fraction {
            case 1: "Maximum"
            case 0.5: "Median"
            case 0: "Minimum"
            default: String(format: "%4.1f%%", 100 * fraction)
            }
            return Quantile(label: label, fraction: fraction)
        }
    }

    /// llama-perplexity's quantiles: linear interpolation between the two nearest of the sorted
    /// values (the median of an even count is the mean of the middle two).
    private static func values(at quantiles: [Quantile], of sorted: [Double]) -> [Double] {
        quantiles.map { quantile in
            guard let first = sorted.first, let last = sorted.last else { return .nan }
            if quantile.fraction <= 0 { return first }
            if quantile.fraction >= 1 { return last }
            let position = quantile.fraction * Double(sorted.count - 1)
            let below = Int(position)
            let weight = position - Double(below)
            return (1 - weight) * sorted[below] + weight * sorted[min(below + 1, sorted.count - 1)]
        }
    }
}

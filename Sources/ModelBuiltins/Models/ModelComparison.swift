import Display
import Evaluation
import Foundation
import Inference
import LumenLanguage
import Scoring

/// The result of `compareModels`: llama-perplexity's divergence statistics of one model against a
/// base, shown as a table of the figures and a chart of the KL divergence at each token.
struct ModelComparison {
    let base: String
    let other: String
    let summary: DivergenceSummary

    /// The figures, as (name, value) rows in llama-perplexity's order.
    var rows: [[String]] {
        func estimate(_ value: Estimate, percent: Bool = false) -> String {
            percent ? String(format: "%.3f ± %.3f %%", 100 * value.value, 100 * value.uncertainty)
                : String(format: "%.6f ± %.6f", value.value, value.uncertainty)
        }
        var rows = [["PPL(base)", estimate(summary.basePerplexity)], ["PPL(other)", estimate(summary.perplexity)],
                    ["PPL(other)/PPL(base)", estimate(summary.perplexityRatio)],
                    ["Cor(ln PPL(other), ln PPL(base))", String(format: "%.2f %%", 100 * summary.logPerplexityCorrelation)],
                    ["mean KLD", estimate(summary.meanKLDivergence)]]
        for (quantile, value) in zip(DivergenceSummary.klQuantiles, summary.klDivergenceQuantiles) {
            rows.append(["\(quantile.label) KLD", String(format: "%.6f", value)])
        }
        rows += [["mean Δp", estimate(summary.meanProbabilityDifference, percent: true)],
                 ["RMS Δp", estimate(summary.rmsProbabilityDifference, percent: true)],
                 ["same top token", estimate(summary.sameTop, percent: true)]]
        return rows
    }

    /// The value a cell gets: it acts as the mean KL divergence, and its properties hold the
    /// figures (`.kl` every token's divergence).
    var measurement: LumenLanguage.Measurement {
        let title = "\(other) against \(base): KL divergence per token"
        let table = Table(columns: ["statistic", "value"], rows: rows)
        let chart = Chart(kind: .line, labels: (1...max(1, summary.count)).map(String.init),
                          series: [.init(name: "KL divergence", values: summary.klDivergences)],
                          title: title, xLabel: "token", yLabel: "KL (nats)")
        var bundle = table.mimeBundle
        let heading = String(format: "%@ against %@ over %d tokens: mean KL divergence %.6f, same top token %.2f %%",
                             other, base, summary.count, summary.meanKLDivergence.value, 100 * summary.sameTop.value)
        bundle.data["text/plain"] = heading + "\n" + summary.report
        bundle.data["text/html"] = "<p>\(heading)</p>" + table.html + chart.svg
        var properties = summary.figures.mapValues { Value.double($0) }
        properties["tokens"] = .integer(summary.count)
        properties["kl"] = .array(summary.klDivergences.map { .double($0) })
        return Measurement(typeName: "ModelComparison", number: summary.meanKLDivergence.value, properties: properties, bundle: bundle)
    }
}

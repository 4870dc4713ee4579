import Display
import Evaluation
import Foundation
import GGUF
import Inference
import LumenKit
import LumenLanguage
import RunLog
import Scoring

/// Scoring text: a model's perplexity and two models compared by their distributions.
extension ModelLibrary {
    /// llama-perplexity's context when a file is scored and none is given.
    static let defaultFileContext = 512

    static let perplexity = Builtin(
        name: "perplexity",
        signature: "perplexity(_ model, _ text: String? = nil, file: String? = nil, context: Int? = nil, plot: Bool = false) -> Perplexity",
        summary: "The model's perplexity on the text or file (it acts as that number; .value, .uncertainty, .tokens, .logprobs). With context: N, or for a file (N = 512 unless given), llama-perplexity's method: windows of N tokens, each scoring its second half, so the figure compares with llama.cpp's. plot: true charts the log-probabilities."
    ) { arguments, context in
        let model = try generativeModel(&arguments)
        let request = try ScoringRequest(&arguments, at: context.location)
        let plot = arguments.labelled("plot").map { $0.0.equals(.bool(true)) } ?? false
        try arguments.finish()
        let output = context.output
        let progressID = "perplexity-\(UUID().uuidString)"
        ProgressBar(label: "perplexity: 0 windows", fraction: 0).show(on: output, id: progressID)
        let scores = try await modelWork(at: context.location) {
            try await model.perplexity(request) { done, count, estimate in
                let label = String(format: "perplexity: %d/%d windows, %.4f so far", done, count, estimate.value)
                ProgressBar(label: label, fraction: Double(done) / Double(count)).show(on: output, id: progressID, finished: done == count)
            }
        }
        let (estimate, logProbabilities) = (scores.estimate, scores.logProbabilities)
        if let runModel = model.runModel {
            try context.record(RunRecord(kind: .perplexity, entry: "perplexity", origin: try context.origin, model: runModel, prompt: request.logged,
                                         value: estimate.value, figures: ["uncertainty": estimate.uncertainty, "tokens": Double(logProbabilities.count),
                                                                          "context": Double(scores.context)]))
        }
        var description = String(format: "perplexity %.4f ± %.5f over %d tokens", estimate.value, estimate.uncertainty, logProbabilities.count)
        if let method = scores.method { description += " (\(method))" }
        var bundle = MIMEBundle.plainText(description)
        if plot {
            let chart = Chart(kind: .line, labels: (1...logProbabilities.count).map(String.init),
                              series: [.init(name: "log-probability", values: logProbabilities.map(Double.init))],
                              title: String(format: "perplexity %.3f", estimate.value), xLabel: "token", yLabel: "log p")
            bundle = MIMEBundle(["text/plain": description + "\n" + chart.plainText, "image/svg+xml": chart.svg])
        }
        return .host(Measurement(typeName: "Perplexity", number: estimate.value, properties: [
            "value": .double(estimate.value),
            "uncertainty": .double(estimate.uncertainty),
            "tokens": .integer(logProbabilities.count),
            "logprobs": .array(logProbabilities.map { .double(Double($0)) }),
        ], bundle: bundle))
    }

    static let compareModels = Builtin(
        name: "compareModels",
        signature: "compareModels(_ base, _ other, _ text: String? = nil, file: String? = nil, context: Int? = nil) -> ModelComparison",
        summary: "Compares other's next-token distributions with base's over the text or file, in memory: KL divergence per token (mean, median, p99, max; .kl for each token, charted), top-1 agreement, Δp of the actual token and both perplexities — llama-perplexity --kl-divergence's statistics. Acts as the mean KL divergence. The two models must share a vocabulary (formats of one model)."
    ) { arguments, context in
        let base = try loadedModel(&arguments, "base")
        let other = try loadedModel(&arguments, "other")
        let request = try ScoringRequest(&arguments, at: context.location)
        try arguments.finish()
        let (baseLease, otherLease) = try await modelWork(at: context.location) { (try await base.lease(), try await other.lease()) }
        defer {
            baseLease.release()
            otherLease.release()
        }
        let (baseSession, otherSession) = (baseLease.session, otherLease.session)
        let (tokens, windows) = try await request.windows(base: baseSession, other: otherSession)
        let output = context.output
        let progressID = "compare-\(UUID().uuidString)"
        ProgressBar(label: "comparing: 0/\(windows.windows.count) windows", fraction: 0).show(on: output, id: progressID)
        let divergences: [TokenDivergence]
        do {
            divergences = try await TextScoring.divergences(of: tokens, windows: windows, base: baseSession, model: otherSession) { done in
                ProgressBar(label: "comparing: \(done)/\(windows.windows.count) windows", fraction: Double(done) / Double(windows.windows.count))
                    .show(on: output, id: progressID, finished: done == windows.windows.count)
            }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw LumenError(.model, "\(error)", at: context.location)
        }
        let comparison = ModelComparison(base: base.name, other: other.name, summary: DivergenceSummary(divergences))
        try context.record(RunRecord(kind: .comparison, entry: "compareModels", origin: try context.origin,
                                         model: RunModel(otherSession.model, name: other.name), baseModel: RunModel(baseSession.model, name: base.name),
                                         prompt: request.logged, value: comparison.summary.meanKLDivergence.value, figures: comparison.summary.figures))
        return .host(comparison.measurement)
    }
}

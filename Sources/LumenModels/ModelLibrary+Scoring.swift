import Display
import Evaluation
import Foundation
import GGUF
import Inference
import LumenLanguage
import RunLog

/// Scoring text: a model's perplexity and two models compared by their distributions.
extension ModelLibrary {
    /// llama-perplexity's context when a file is scored and none is given.
    static let defaultFileContext = 512

    static let perplexity = Builtin(
        name: "perplexity",
        signature: "perplexity(_ model, _ text: String? = nil, file: String? = nil, context: Int? = nil, plot: Bool = false) -> Perplexity",
        summary: "The model's perplexity on the text or file (it acts as that number; .value, .uncertainty, .tokens, .logprobs). With context: N, or for a file (N = 512 unless given), llama-perplexity's method: windows of N tokens, each scoring its second half, so the figure compares with llama.cpp's. plot: true charts the log-probabilities."
    ) { arguments, context in
        if case .host(let object as RemoteModelObject)? = arguments.peekPositional() {
            return try await remotePerplexity(object, &arguments, context: context)
        }
        let model = try model(&arguments)
        let request = try ScoringRequest(&arguments, at: context.location)
        let plot = arguments.labelled("plot").map { $0.0.equals(.bool(true)) } ?? false
        try arguments.finish()
        let session = try modelCall(at: context.location) { () throws(ModelError) in try model.session() }
        let (tokens, windows) = try await request.windows(base: session)
        let output = context.output
        let progressID = "perplexity-\(UUID().uuidString)"
        ProgressBar(label: "perplexity: 0/\(windows.windows.count) windows", fraction: 0).show(on: output, id: progressID)
        let result: (estimate: PerplexityEstimate, logProbabilities: [Float])
        do {
            result = try await TextScoring.perplexity(of: tokens, windows: windows, session: session) { done, estimate in
                let label = String(format: "perplexity: %d/%d windows, %.4f so far", done, windows.windows.count, estimate.value)
                ProgressBar(label: label, fraction: Double(done) / Double(windows.windows.count)).show(on: output, id: progressID, finished: done == windows.windows.count)
            }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw LumenError(.model, "\(error)", at: context.location)
        }
        let estimate = result.estimate.perplexity
        let logProbabilities = result.logProbabilities
        try context.record(RunRecord(kind: .perplexity, entry: "perplexity", origin: try context.origin,
                                         model: RunModel(session.model, name: model.name), prompt: request.logged, value: estimate.value,
                                         figures: ["uncertainty": estimate.uncertainty, "tokens": Double(logProbabilities.count),
                                                   "context": Double(request.context ?? tokens.count)]))
        var description = String(format: "perplexity %.4f ± %.5f over %d tokens", estimate.value, estimate.uncertainty, logProbabilities.count)
        if let window = request.context { description += " (\(windows.windows.count) windows of \(window))" }
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
        let base: LoadedModel = try hostObject(&arguments, "base", "a model (from load)")
        let other: LoadedModel = try hostObject(&arguments, "other", "a model (from load)")
        let request = try ScoringRequest(&arguments, at: context.location)
        try arguments.finish()
        let baseSession = try modelCall(at: context.location) { () throws(ModelError) in try base.session() }
        let otherSession = try modelCall(at: context.location) { () throws(ModelError) in try other.session() }
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

    /// `perplexity(r, text)` for a served model: the server scores the whole text in one request
    /// (`echo` with `logprobs`), so there are no windows; the value is exp of the mean negative
    /// log-probability of every token after the first, as for a loaded model's single window.
    static func remotePerplexity(_ model: RemoteModelObject, _ arguments: inout Arguments, context: Builtin.Context) async throws -> Value {
        _ = arguments.nextPositional()
        let text = try arguments.string(try arguments.requirePositional("text"), "text")
        try arguments.finish()
        let logProbabilities: [Float]
        do {
            logProbabilities = try await model.remote.promptLogProbabilities(text).map(Float.init)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw LumenError(.model, "\(error)", at: context.location)
        }
        var accumulated = PerplexityEstimate()
        accumulated.add(logProbabilities)
        let estimate = accumulated.perplexity
        if let runModel = model.runModel {
            try context.record(RunRecord(kind: .perplexity, entry: "perplexity", origin: try context.origin, model: runModel,
                                             prompt: text, value: estimate.value,
                                             figures: ["uncertainty": estimate.uncertainty, "tokens": Double(logProbabilities.count)]))
        }
        let description = String(format: "perplexity %.4f ± %.5f over %d tokens (scored by the server)", estimate.value, estimate.uncertainty, logProbabilities.count)
        return .host(Measurement(typeName: "Perplexity", number: estimate.value, properties: [
            "value": .double(estimate.value),
            "uncertainty": .double(estimate.uncertainty),
            "tokens": .integer(logProbabilities.count),
            "logprobs": .array(logProbabilities.map { .double(Double($0)) }),
        ], bundle: .plainText(description)))
    }
}

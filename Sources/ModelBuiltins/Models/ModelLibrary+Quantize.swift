import Display
import Evaluation
import Executors
import Foundation
import GGUF
import GenerationTypes
import Inference
import LumenLanguage
import Quantization

extension ModelLibrary {
    /// Where `quantize` writes when no path is given: a `lumen-quantized` folder in the system's
    /// temporary directory, one file per model and scheme.
    static func temporaryQuantizedPath(for model: LoadedModel, _ scheme: QuantizationScheme) throws(LumenError) -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lumen-quantized")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw LumenError(.model, "cannot create \(directory.path): \(error.localizedDescription)")
        }
        return directory.appendingPathComponent("\(model.name).\(scheme).gguf").path
    }

    static let quantize = Builtin(
        name: "quantize",
        signature: "quantize(_ model, to: String, path: String? = nil) -> Model",
        summary: "Writes the model's weights in another format (\(QuantizationScheme.allCases.map(\.rawValue).joined(separator: ", ")); a temporary file unless path is given) and loads the result with the same settings."
    ) { arguments, context in
        let model = try loadedModel(&arguments)
        guard let (schemeName, schemeLocation) = arguments.labelled("to") else {
            throw LumenError(.value, "quantize() needs the target format, e.g. to: \"Q4_K_M\"", at: context.location)
        }
        let name = try arguments.string((schemeName, schemeLocation), "to")
        let path = try arguments.labelledString("path")
        try arguments.finish()
        guard let scheme = QuantizationScheme(name: name) else {
            let choices = QuantizationScheme.allCases.map(\.rawValue).joined(separator: ", ")
            throw LumenError(.value, "unknown format \(name.debugDescription); choose one of \(choices)", at: schemeLocation)
        }
        let source = try modelCall(at: context.location) { () throws(ModelError) in try model.model() }.gguf
        let destination = try path ?? temporaryQuantizedPath(for: model, scheme)
        let output = context.output
        let progress = "quantize-\(UUID().uuidString)"
        ProgressBar(label: "quantizing \(model.name) to \(scheme)", fraction: 0).show(on: output, id: progress)
        let quantizer = ModelQuantizer(scheme: scheme, threads: model.threads)
        let stop = StopSignal()
        // Quantizing is long, blocking work: it runs on a thread of its own and checks `stop`
        // every few rows, which cancelling the cell raises.
        let summary: ModelQuantizer.Summary
        do {
            summary = try await withTaskCancellationHandler {
                try await DedicatedThread.run(name: "lumen-quantize") { () throws -> ModelQuantizer.Summary in
                    try quantizer.quantize(source, to: destination, progress: { step in
                        // One update per twentieth of the tensors keeps terminals and logs short.
                        guard (20 * step.completed) / step.total != (20 * (step.completed - 1)) / step.total else { return }
                        let label = "quantizing \(model.name) to \(scheme): \(step.tensor) → \(step.type)"
                        ProgressBar(label: label, fraction: Double(step.completed) / Double(step.total)).show(on: output, id: progress)
                    }, isCancelled: { stop.isRaised })
                }
            } onCancel: {
                stop.raise()
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw LumenError(.model, "\(error)", at: context.location)
        }
        // The file was just replaced: weights cached from an earlier file at that path are stale.
        WeightCache.shared.evict(destination)
        let quantized: LoadedModel
        do {
            quantized = try await DedicatedThread.run(name: "lumen-load") { () throws(ModelError) in
                try LoadedModel(path: destination, contextLength: model.contextLength, threads: model.threads, instances: model.instances, parallel: model.parallel,
                                cacheType: model.cacheType)
            }
        } catch {
            throw LumenError(.model, "\(error)", at: context.location)
        }
        let line = String(format: "%@ → %@: %.2f MB → %.2f MB (%@)", model.name, scheme.rawValue,
                          Double(summary.inputBytes) / 1e6, Double(summary.outputBytes) / 1e6, summary.sizeChange)
        output.progress(MIMEBundle.plainText(line), id: progress, finished: true)
        return .host(quantized)
    }
}

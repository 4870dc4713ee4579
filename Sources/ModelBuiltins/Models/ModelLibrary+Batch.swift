import Display
import Evaluation
import Foundation
import GGUF
import GenerationTypes
import Inference
import LumenLanguage

extension ModelLibrary {
    /// One generation of a batch or comparison: the model, prompt and options, and the labels of
    /// its row in the table.
    struct BatchJob {
        let model: any GenerativeModel
        let prompt: String
        let options: GenerationOptions
        let label: [String]
    }

    /// Runs one generation to the end without showing it.
    static func collect(_ model: any GenerativeModel, prompt: String, options: GenerationOptions) async throws -> Generation {
        let collected = try await GenerationCollector.collect(try await model.generate(prompt, options: options, hooks: [], stop: StopSignal()))
        try Task.checkCancellation()
        let stats = collected.summary ?? GenerationSummary(promptTokens: 0, generatedTokens: collected.tokens.count, timeToFirstToken: 0,
                                                           promptTokensPerSecond: 0, generationTokensPerSecond: 0, finishReason: .cancelled)
        return Generation(prompt: prompt, text: collected.text, tokens: collected.tokens, stats: stats, options: options, interrupted: false)
    }

    /// Runs `jobs` through their models' session pools (or endpoints) in a task group, showing a
    /// progress bar as each finishes (and is logged, as made by `entry`), then a table of them
    /// all; returns the generations in order, marked as shown (the cell does not show them again
    /// as a list). Cancelling stops every member; the table shows the finished rows.
    static func runAll(_ jobs: [BatchJob], labelColumns: [String], entry: String, context: Builtin.Context) async throws -> Value {
        let output = context.output
        let progressID = "batch-progress-\(UUID().uuidString)"
        var results = [Generation?](repeating: nil, count: jobs.count)
        func table() -> MIMEBundle {
            Table(columns: labelColumns + ["text", "tokens", "tok/s", "finish"], rows: jobs.indices.map { index in
                let generation = results[index]
                let text = generation.map { $0.text.count > 80 ? String($0.text.prefix(80)) + "…" : $0.text } ?? "…"
                return jobs[index].label + [text, generation.map { String($0.tokens.count) } ?? "",
                                           generation.map { String(format: "%.1f", $0.stats.generationTokensPerSecond) } ?? "",
                                           generation?.finishReason ?? "running"]
            }).mimeBundle
        }
        ProgressBar(label: "0/\(jobs.count)", fraction: 0).show(on: output, id: progressID)
        do {
            try await withThrowingTaskGroup(of: (Int, Generation).self) { group in
                for (index, job) in jobs.enumerated() {
                    let (model, prompt, options) = (job.model, job.prompt, job.options)
                    group.addTask(priority: Task.currentPriority) {
                        (index, try await collect(model, prompt: prompt, options: options))
                    }
                }
                var done = 0
                for try await (index, generation) in group {
                    results[index] = generation
                    try context.record(generation, entry: entry, model: jobs[index].model)
                    done += 1
                    Job.current?.report(progress: Double(done) / Double(jobs.count))
                    ProgressBar(label: "\(done)/\(jobs.count)", fraction: Double(done) / Double(jobs.count))
                        .show(on: output, id: progressID, finished: done == jobs.count)
                }
            }
        } catch {
            output.display(table(), displayID: nil)
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            throw LumenError(.model, "\(error)", at: context.location)
        }
        output.display(table(), displayID: nil)
        let generations = Value.array(results.compactMap { $0 }.map { .host($0) })
        context.shownLive(generations)
        return generations
    }

    /// The models' names as the rows of a batch or comparison show them: a name that several
    /// members share is followed by where each runs (`SmolLM2 (local)`, `SmolLM2 (gpu-box:8000)`),
    /// and by its place in the list if that is still not enough (`SmolLM2 (local, 2)`).
    static func distinctNames(_ models: [any GenerativeModel]) -> [String] {
        func counts(_ names: [String]) -> [String: Int] { Dictionary(names.map { ($0, 1) }, uniquingKeysWith: +) }
        let names = models.map(\.name)
        let byName = counts(names)
        let placed = zip(models, names).map { byName[$1, default: 0] > 1 ? "\($1) (\($0.place))" : $1 }
        let byPlace = counts(placed)
        return placed.enumerated().map { index, name in
            byPlace[name, default: 0] > 1 ? String(name.dropLast()) + ", \(index + 1))" : name
        }
    }

    static let batch = Builtin(
        name: "batch",
        signature: "batch(_ model, _ prompts: [String], maxTokens:, temperature:, …) -> [Generation]",
        summary: "Generates for every prompt through the model's session pool (load with instances: N to run N at once; a remote model spreads them over its endpoints), filling a table in as each finishes; returns the generations in prompt order. Given an array of models, runs every prompt on each."
    ) { arguments, context in
        let models = try generativeModels(&arguments)
        let (promptsValue, location) = try arguments.requirePositional("prompts")
        let prompts = try Operators.elements(of: promptsValue, at: location).map { value in
            guard case .string(let text) = value else { throw LumenError(.type, "batch() needs an array of Strings, got \(value.typeName)", at: location) }
            return text
        }
        let options = try generationOptions(&arguments, defaults: context.generationDefaults)
        try arguments.finish()
        let names = distinctNames(models)
        let jobs = zip(models, names).flatMap { model, name in
            prompts.map { BatchJob(model: model, prompt: $0, options: options, label: (models.count > 1 ? [name] : []) + [$0.count > 40 ? String($0.prefix(40)) + "…" : $0]) }
        }
        let columns = (models.count > 1 ? ["model"] : []) + ["prompt"]
        return try await runAll(jobs, labelColumns: columns, entry: "batch", context: context)
    }

    static let compare = Builtin(
        name: "compare",
        signature: "compare(_ model, _ prompt: String, temperature: [0.2, 0.8, 1.2], seed: 1, maxTokens: 40, …) -> [Generation]",
        summary: "Runs the prompt with every combination of the options given as lists and shows the results side by side, filling in as each finishes. Given an array of models (local and remote mixed), runs every combination on each."
    ) { arguments, context in
        let models = try generativeModels(&arguments)
        let prompt = try arguments.string(try arguments.requirePositional("prompt"), "prompt")
        var variations: [(label: String, values: [Value])] = []
        var fixed: [String: Value] = try context.generationDefaults
        for label in generationLabels + constraintLabels {
            guard let (value, _) = arguments.labelled(label) else { continue }
            if case .array(let values) = value, label != "stop", label != "choice" {
                variations.append((label, values))
            } else {
                fixed[label] = value
            }
        }
        try arguments.finish()
        var combinations: [[(String, Value)]] = [[]]
        for variation in variations {
            combinations = combinations.flatMap { partial in variation.values.map { partial + [(variation.label, $0)] } }
        }
        var jobs: [BatchJob] = []
        for (model, name) in zip(models, distinctNames(models)) {
            for combination in combinations {
                var call = Arguments(function: "compare", at: context.location, positional: [], labelled: combination.map { ($0.0, $0.1, context.location) })
                jobs.append(BatchJob(model: model, prompt: prompt, options: try generationOptions(&call, defaults: fixed),
                                     label: (models.count > 1 ? [name] : []) + combination.map { $0.1.printed }))
            }
        }
        let columns = (models.count > 1 ? ["model"] : []) + variations.map(\.label)
        return try await runAll(jobs, labelColumns: columns, entry: "compare", context: context)
    }

    static let bench = Builtin(
        name: "bench",
        signature: "bench(_ model, promptTokens: 128, genTokens: 64, repetitions: 3, threads: [1, 2]) -> Bench",
        summary: "Prompt-processing and generation speed (tokens per second, mean ± sd) for each thread count, as a table and a bar chart; .rows gives the figures to compare with another run."
    ) { arguments, context in
        let model = try loadedModel(&arguments)
        let promptTokens = try arguments.labelledInteger("promptTokens") ?? 128
        let genTokens = try arguments.labelledInteger("genTokens") ?? 64
        let repetitions = try arguments.labelledInteger("repetitions") ?? 3
        let threadCounts = try arguments.labelled("threads").map { argument throws in
            try Operators.elements(of: argument.0, at: argument.1).compactMap { if case .integer(let n) = $0 { n } else { nil } }
        } ?? [1, ProcessInfo.processInfo.activeProcessorCount]
        try arguments.finish()
        let llama = try modelCall(at: context.location) { () throws(ModelError) in try model.model() }
        guard promptTokens >= 1, genTokens >= 1, repetitions >= 1, !threadCounts.isEmpty, threadCounts.allSatisfy({ $0 >= 1 }),
              promptTokens + genTokens <= llama.configuration.contextLength else {
            throw LumenError(.value, "bench() needs positive counts, thread counts of 1 or more, and promptTokens + genTokens within the context", at: context.location)
        }
        let vocabulary = Int32(llama.configuration.vocabularySize)
        let tokens = [llama.tokenizer.vocabulary.bos ?? 0] + (1..<max(promptTokens, genTokens)).map { Int32(3 + $0 % Int(max(1, vocabulary - 3))) }
        var rows: [[String]] = []
        var records: [Value] = []
        var series: [Double] = []
        var labels: [String] = []
        for threads in threadCounts {
            let session = ModelSession(model: llama, contextLength: promptTokens + genTokens + 1, threads: threads, batchSize: min(promptTokens, 512))
            for test in [SpeedTest.promptProcessing(promptTokens), .generation(genTokens)] {
                let samples = try await test.measure(on: session, tokens: tokens, repetitions: repetitions)
                let (mean, sd) = (samples.mean, samples.standardDeviation)
                rows.append([model.name, String(threads), test.name, Measurement.meanAndDeviation(mean, sd)])
                var record = LumenDictionary()
                record[.string("model")] = .string(model.name)
                record[.string("threads")] = .integer(threads)
                record[.string("test")] = .string(test.name)
                record[.string("tokensPerSecond")] = .double(mean)
                record[.string("sd")] = .double(sd)
                records.append(.dictionary(record))
                series.append(mean)
                labels.append("\(test.name) t\(threads)")
            }
        }
        var bundle = Table(columns: ["model", "threads", "test", "t/s"], rows: rows).mimeBundle
        bundle.data["text/html"]? += Chart(kind: .bar, labels: labels, series: [.init(name: "", values: series)], title: "\(model.name) speed", yLabel: "tokens/s").svg
        return .host(Measurement(typeName: "Bench", number: nil, properties: ["rows": .array(records)], bundle: bundle))
    }
}

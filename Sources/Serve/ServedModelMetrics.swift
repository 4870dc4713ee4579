import Inference
import Metrics
import Synchronization

/// One served model's figures on `GET /metrics`, labelled `model_name` as vLLM labels them:
/// the gauges the Gateway API Inference Extension's model-server protocol reads
/// (`vllm:num_requests_running`, `vllm:num_requests_waiting`, `vllm:kv_cache_usage_perc`), read
/// from the model's session pool when scraped, and Lumen's own counters and histograms, recorded
/// as requests run. Recorded through swift-metrics into the server's Prometheus registry.
final class ServedModelMetrics: Sendable {
    let model: ServedModel
    private let factory: any MetricsFactory
    private let dimensions: [(String, String)]
    private let running: Gauge
    private let waiting: Gauge
    private let cacheUsage: Gauge
    private let sessions: Gauge
    private let promptTokens: Counter
    private let generationTokens: Counter
    private let timeToFirstToken: Metrics.Timer
    private let interTokenLatency: Metrics.Timer
    /// The decode passes of each batch size counted so far (at index k − 1, those of k
    /// sequences), so a scrape adds only what is new.
    private let passesCounted = Mutex<[Int]>([])

    /// The metrics of `model`, made by `factory`.
    init(model: ServedModel, factory: any MetricsFactory) {
        self.model = model
        self.factory = factory
        let dimensions = [("model_name", model.name)]
        self.dimensions = dimensions
        running = Gauge(label: ServerMetrics.Name.running, dimensions: dimensions, factory: factory)
        waiting = Gauge(label: ServerMetrics.Name.waiting, dimensions: dimensions, factory: factory)
        cacheUsage = Gauge(label: ServerMetrics.Name.cacheUsage, dimensions: dimensions, factory: factory)
        sessions = Gauge(label: ServerMetrics.Name.sessions, dimensions: dimensions, factory: factory)
        promptTokens = Counter(label: ServerMetrics.Name.promptTokens, dimensions: dimensions, factory: factory)
        generationTokens = Counter(label: ServerMetrics.Name.generationTokens, dimensions: dimensions, factory: factory)
        timeToFirstToken = Metrics.Timer(label: ServerMetrics.Name.timeToFirstToken, dimensions: dimensions, factory: factory)
        interTokenLatency = Metrics.Timer(label: ServerMetrics.Name.interTokenLatency, dimensions: dimensions, factory: factory)
        sessions.record(model.pool.count)
    }

    /// Reads the pool's gauges and the decode passes since the last scrape.
    func scrape() {
        let pool = model.pool
        let leases = pool.leases
        running.record(leases.held)
        waiting.record(leases.waiting)
        cacheUsage.record(pool.cacheUsage)
        // Read under the lock, so scrapes at once neither count a pass twice nor miss one.
        let added: [(sequences: Int, passes: Int)] = passesCounted.withLock { counted in
            let passes = pool.batchStatistics.passesBySequences
            defer { counted = passes }
            return passes.indices.map { ($0 + 1, passes[$0] - ($0 < counted.count ? counted[$0] : 0)) }.filter { $0.passes > 0 }
        }
        for (sequences, count) in added {
            Counter(label: ServerMetrics.Name.decodePasses, dimensions: dimensions + [("sequences", String(sequences))], factory: factory).increment(by: count)
        }
    }

    /// A request's prompt, read once whatever its number of choices.
    func countPrompt(tokens: Int) {
        promptTokens.increment(by: tokens)
    }

    /// A token generated: the request's first `sinceArrival` after it arrived, a later one of
    /// its choice `sincePrevious` after the one before (the first of a later choice has neither).
    func countToken(sinceArrival: Duration?, sincePrevious: Duration?) {
        generationTokens.increment()
        if let sinceArrival { timeToFirstToken.record(duration: sinceArrival) }
        if let sincePrevious { interTokenLatency.record(duration: sincePrevious) }
    }

    /// A choice that ended, and why (`stop`, `length`, `cancelled`, …).
    func countFinished(reason: String) {
        Counter(label: ServerMetrics.Name.finished, dimensions: dimensions + [("finished_reason", reason)], factory: factory).increment()
    }
}

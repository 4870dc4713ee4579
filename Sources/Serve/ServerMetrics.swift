import Metrics
import Prometheus

/// What `lumen serve` shows on `GET /metrics`, in Prometheus' text format: each served model's
/// `ServedModelMetrics`, recorded through swift-metrics into a registry of this server's own
/// (swift-prometheus), which writes the exposition.
final class ServerMetrics: Sendable {
    /// The metrics' names: vLLM's where the Gateway API Inference Extension reads them, Lumen's own
    /// (`lumen_…`) for the rest.
    enum Name {
        /// Requests holding a session: decoding, or reading their prompt.
        static let running = "vllm:num_requests_running"
        /// Requests waiting for a session.
        static let waiting = "vllm:num_requests_waiting"
        /// The share of the sessions' caches that running requests hold, 0 to 1.
        static let cacheUsage = "vllm:kv_cache_usage_perc"
        /// The model's sessions.
        static let sessions = "lumen_sessions"
        /// Prompt tokens of the requests that got a session.
        static let promptTokens = "lumen_prompt_tokens_total"
        /// Tokens generated.
        static let generationTokens = "lumen_generation_tokens_total"
        /// From a request's arrival to its first token, queueing included.
        static let timeToFirstToken = "lumen_time_to_first_token_seconds"
        /// Between two tokens of one choice.
        static let interTokenLatency = "lumen_inter_token_latency_seconds"
        /// Decode passes, labelled with how many sequences each decoded together (`sequences`).
        static let decodePasses = "lumen_decode_passes_total"
        /// Choices that ended, labelled with why (`finished_reason`).
        static let finished = "lumen_requests_finished_total"
    }

    /// The histograms' buckets, in seconds: vLLM's for the same figures.
    static let buckets: [String: [Double]] = [
        Name.timeToFirstToken: [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560],
        Name.interTokenLatency: [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80],
    ]

    private let registry = PrometheusCollectorRegistry()
    private let models: [ServedModelMetrics]

    /// The metrics of `models`.
    init(models: [ServedModel]) {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets = Self.buckets.mapValues { $0.map { Duration.nanoseconds(Int64($0 * 1e9)) } }
        self.models = models.map { ServedModelMetrics(model: $0, factory: factory) }
    }

    /// The metrics of `model`, one of those served.
    func metrics(of model: ServedModel) -> ServedModelMetrics {
        models.first { $0.model === model } ?? models[0]
    }

    /// The exposition, after reading each model's gauges.
    func exposition() -> [UInt8] {
        for model in models { model.scrape() }
        return registry.emitToBuffer()
    }
}

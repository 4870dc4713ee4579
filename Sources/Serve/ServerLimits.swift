import Grammars

/// How much `lumen serve` takes on and how long it waits, so that abandoned, slow and excess
/// clients cannot tie it up: the bounds behind `--timeout-idle`, `--max-connections`,
/// `--max-queue`, `--max-queue-wait`, `--drain-delay` and `--shutdown-grace`.
public struct ServerLimits: Sendable {
    /// How long a connection may stay idle (no request, or a request whose headers or body have
    /// not all arrived) before it is closed.
    public var idleTimeout: Duration = .seconds(30)
    /// The most connections open at once; more are answered 503 and closed. Lowered to what
    /// the process's descriptor limit allows.
    public var maximumConnections = 1024
    /// The most requests waiting for a session of one model; more are answered 503 with `Retry-After`.
    public var maximumQueued = 64
    /// The longest a request waits for a session before it is answered 503 with `Retry-After`.
    public var maximumWait: Duration = .seconds(120)
    /// After SIGTERM or SIGINT: how long the server goes on taking requests, `/ready` answering
    /// 503, before it stops taking new connections (time for a load balancer to stop sending any).
    public var drainDelay: Duration = .zero
    /// After the drain delay: how long running requests may go on before they are cancelled.
    public var shutdownGrace: Duration = .seconds(5)
    /// The most tokens one `/v1/embeddings` request may ask to embed, its inputs together
    /// (`--max-embedding-tokens`); more get 400.
    public var maximumEmbeddingTokens = 8192
    /// What a request's grammar or JSON schema may cost to compile and to follow
    /// (`--grammar-max-nesting`, `--grammar-max-rules`, `--grammar-max-alternatives`, `--grammar-max-symbols`).
    public var grammar = GrammarLimits.standard
    /// What `Retry-After` asks a refused client to wait, in seconds.
    static let retryAfterSeconds = 1

    /// The defaults.
    public init() {}
}

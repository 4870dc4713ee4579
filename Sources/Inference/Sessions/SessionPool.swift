import Executors
import Foundation
import GGUF

/// A model's sessions: the one pool cells, `lumen serve` and the commands take sessions from.
/// A request gets the least busy session (of equally busy ones, the next in turn; or the one it
/// prefers, when that has room); when every session has `requestsPerSession` users, requests
/// wait their turn, first come, first served.
public final class SessionPool: Sendable {
    /// The weights every session runs.
    public let model: LanguageModel
    /// The sessions, each with its own cache.
    private let sessions: [ModelSession]
    private let places: FairPool

    /// `instances` sessions (at least one) of `model`, each with a cache of `contextLength`
    /// tokens (nil: the model's) for each of `sequences` sequences decoded together, `threads`
    /// threads and batches of `batchSize`, taking `requestsPerSession` users at once (more than
    /// its sequences: generations wait in the session's queue, as cells' do; as many: requests
    /// wait here, within the bounds `lumen serve` sets), every forward pass applying `adapters`,
    /// keys and values in a cache of `cacheType` (one the model's heads fit: `ModelConfiguration.fits`).
    public init(model: LanguageModel, instances: Int = 1, contextLength: Int?, threads: Int, batchSize: Int = 64, sequences: Int = 1,
                requestsPerSession: Int = .max, adapters: AdapterSet = .none, cacheType: KVCacheType = .f32) {
        self.model = model
        sessions = (0..<max(1, instances)).map { _ in
            ModelSession(model: model, contextLength: contextLength, threads: threads, batchSize: batchSize, cacheType: cacheType, sequences: sequences,
                         adapters: adapters)
        }
        places = FairPool(count: sessions.count, limit: requestsPerSession)
    }

    /// A pool on the weights of the file at `path`, shared with every other user of that file
    /// (`WeightCache`).
    public convenience init(loading path: String, instances: Int = 1, contextLength: Int?, threads: Int, batchSize: Int = 64,
                            sequences: Int = 1, requestsPerSession: Int = .max) throws(ModelError) {
        self.init(model: try WeightCache.shared.model(at: path), instances: instances, contextLength: contextLength, threads: threads,
                  batchSize: batchSize, sequences: sequences, requestsPerSession: requestsPerSession)
    }

    /// The context length of its sessions.
    public var contextLength: Int { sessions[0].contextLength }

    /// How many sessions it has.
    public var count: Int { sessions.count }

    /// How many sequences each session decodes together.
    public var sequencesPerSession: Int { sessions[0].sequenceCapacity }

    /// What its sessions' batches have decoded, summed (the largest batch: the largest of any).
    public var batchStatistics: ModelSession.BatchStatistics {
        sessions.map(\.batchStatistics).reduce(into: ModelSession.BatchStatistics()) { total, one in
            total.promptTokens += one.promptTokens
            total.passes += one.passes
            total.tokens += one.tokens
            total.largest = max(total.largest, one.largest)
            for (index, passes) in one.passesBySequences.enumerated() {
                if index == total.passesBySequences.count { total.passesBySequences.append(0) }
                total.passesBySequences[index] += passes
            }
        }
    }

    /// How many users hold a session now (a request of `lumen serve` each), and how many wait for one.
    public var leases: (held: Int, waiting: Int) {
        let occupancy = places.occupancy
        return (occupancy.taken, occupancy.waiting)
    }

    /// The share of its sessions' caches (every sequence's context) that the generations running
    /// now hold, from 0 to 1.
    public var cacheUsage: Double {
        let capacity = sessions.reduce(0) { $0 + $1.contextLength * $1.sequenceCapacity }
        return capacity == 0 ? 0 : Double(sessions.reduce(0) { $0 + $1.cachedTokensInUse }) / Double(capacity)
    }

    /// Bytes of keys and values one cached token takes.
    public var bytesPerCachedToken: Int { sessions[0].bytesPerCachedToken }

    /// Bytes of cache and buffers of all its sessions.
    public var stateByteCount: Int { sessions.reduce(0) { $0 + $1.stateByteCount } }

    /// A session, held until the lease is released or dropped: session `preferring` when it has
    /// room (a conversation's, whose cache holds its turns), else the least busy. Waiting (when
    /// every session is full) is cancellable and bounded by `queueLimit` and `waitLimit`
    /// (`FairPool.Refusal`); `queued` hears how many were ahead.
    public func lease(preferring: Int? = nil, queueLimit: Int = .max, waitLimit: Duration? = nil,
                      queued: (@Sendable (Int) -> Void)? = nil) async throws -> SessionLease {
        let index = try await places.acquire(preferring: preferring, queueLimit: queueLimit, waitLimit: waitLimit, queued: queued)
        return SessionLease(index: index, session: sessions[index], places: places)
    }
}

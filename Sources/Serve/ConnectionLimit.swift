import Foundation
import Logging
import NIOCore
import Synchronization

/// The server's count of open connections against its limits, so that it refuses connections
/// before it could run out of descriptors: at most the configured number are served, and at most
/// half the descriptors left after a reserve (the soft limit raised to the hard limit first);
/// beyond that, connections get a 503, and once refused connections would fill the descriptors
/// too, new ones are closed at once. Before refusing, it closes the connection idle longest (one
/// with no request under way), so idle clients cannot keep others out until their idle timeout.
/// Reaching either limit is logged once each time, at warning level.
final class ConnectionLimit: Sendable {
    /// What becomes of a new connection.
    enum Admission {
        /// Served.
        case admitted
        /// Answered 503 and closed.
        case refused
        /// Closed at once: no descriptors to spare for an answer.
        case dropped
    }

    /// The most connections served at once.
    let limit: Int
    /// What set `limit`, for the log: the option or the descriptor limit.
    let origin: String
    /// The most connections open at once, served or being refused.
    private let descriptors: Int
    private let open = Atomic<Int>(0)
    private let full = Atomic<Bool>(false)
    private let exhausted = Atomic<Bool>(false)
    private let logger: Logger
    /// The connections with no request under way, each with when it became idle (a count).
    private let idle = Mutex<(channels: [ObjectIdentifier: (since: Int, channel: any Channel)], clock: Int)>(([:], 0))
    /// Descriptors kept for everything but connections: model files, the run log, the event loops.
    static let reservedDescriptors = 64

    /// A limit of `configured` connections, or fewer if the descriptor limit demands it.
    init(configured: Int, logger: Logger) {
        let soft = Self.raiseDescriptorLimit()
        descriptors = max(2, soft - Self.reservedDescriptors)
        if descriptors / 2 < configured {
            limit = descriptors / 2
            origin = "half of the descriptor limit \(soft) after \(Self.reservedDescriptors) reserved"
        } else {
            limit = configured
            origin = "--max-connections \(configured)"
        }
        self.logger = logger
    }

    /// Counts a new connection and says what becomes of it; each is counted until `leave`.
    func admit() -> Admission {
        let count = open.wrappingAdd(1, ordering: .relaxed).newValue
        if count <= limit { return .admitted }
        if !full.exchange(true, ordering: .relaxed) {
            logger.warning("\(limit) connections are open, the most allowed (\(origin)): each new one closes the one idle longest, or gets 503 when none is idle")
        }
        if let oldest = takeOldestIdle() {
            // It is counted until its close completes: briefly one over the limit.
            oldest.close(promise: nil)
            return .admitted
        }
        if count <= descriptors { return .refused }
        if !exhausted.exchange(true, ordering: .relaxed) {
            logger.warning("\(count) connections fill the descriptors this server may use (\(descriptors)): new ones are closed at once")
        }
        return .dropped
    }

    /// Marks `channel` idle (no request under way) or busy.
    func setIdle(_ channel: any Channel, _ isIdle: Bool) {
        idle.withLock { idle in
            if isIdle {
                idle.clock += 1
                idle.channels[ObjectIdentifier(channel)] = (idle.clock, channel)
            } else {
                idle.channels[ObjectIdentifier(channel)] = nil
            }
        }
    }

    /// The connection idle longest, no longer marked idle, if any.
    private func takeOldestIdle() -> (any Channel)? {
        idle.withLock { idle in
            guard let (key, oldest) = idle.channels.min(by: { $0.value.since < $1.value.since }) else { return nil }
            idle.channels[key] = nil
            return oldest.channel
        }
    }

    /// Counts a connection closed.
    func leave() {
        let count = open.wrappingSubtract(1, ordering: .relaxed).newValue
        guard count < limit else { return }
        exhausted.store(false, ordering: .relaxed)
        if full.exchange(false, ordering: .relaxed) {
            logger.info("\(count) connections are open, below the limit again")
        }
    }

    /// Raises the soft limit on open descriptors to the hard limit; returns the soft limit.
    private static func raiseDescriptorLimit() -> Int {
        var limits = rlimit()
        guard getrlimit(RLIMIT_NOFILE_RESOURCE, &limits) == 0 else { return Int.max / 2 }
        // The kernel caps descriptors per process (nr_open, 2^20 by default) below an infinite hard limit.
        let wanted = min(limits.rlim_max, 1 << 20)
        if limits.rlim_cur < wanted {
            var raised = limits
            raised.rlim_cur = wanted
            if setrlimit(RLIMIT_NOFILE_RESOURCE, &raised) == 0 { limits = raised }
        }
        return Int(clamping: limits.rlim_cur)
    }
}

#if canImport(Glibc)
/// `RLIMIT_NOFILE` as glibc's `getrlimit` takes it.
private let RLIMIT_NOFILE_RESOURCE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
#else
private let RLIMIT_NOFILE_RESOURCE = RLIMIT_NOFILE
#endif

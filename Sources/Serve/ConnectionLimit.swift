import Foundation
import Logging
import Synchronization

/// The server's count of open connections against its limit: the configured maximum, lowered to
/// what the process's descriptor limit leaves room for (raised to its hard limit first), so the
/// server refuses connections with a 503 before it could run out of descriptors. Reaching the
/// limit is logged once each time, at warning level.
final class ConnectionLimit: Sendable {
    /// The most connections open at once.
    let limit: Int
    /// What set the limit, for the log: the option or the descriptor limit.
    let origin: String
    private let open = Atomic<Int>(0)
    private let full = Atomic<Bool>(false)
    private let logger: Logger
    /// Descriptors kept for everything but connections: model files, the run log, the event loops.
    static let reservedDescriptors = 64

    /// A limit of `configured` connections, or fewer if the descriptor limit demands it.
    init(configured: Int, logger: Logger) {
        let room = Self.raiseDescriptorLimit() - Self.reservedDescriptors
        if room < configured {
            limit = max(1, room)
            origin = "the descriptor limit, \(room + Self.reservedDescriptors)"
        } else {
            limit = configured
            origin = "--max-connections \(configured)"
        }
        self.logger = logger
    }

    /// Counts a new connection; false when it is one too many (it is then refused).
    func admit() -> Bool {
        let count = open.wrappingAdd(1, ordering: .relaxed).newValue
        guard count > limit else { return true }
        if !full.exchange(true, ordering: .relaxed) {
            logger.warning("\(limit) connections are open, the most allowed (\(origin)): new ones get 503 until some close")
        }
        return false
    }

    /// Counts a connection closed.
    func leave() {
        let count = open.wrappingSubtract(1, ordering: .relaxed).newValue
        if count < limit, full.exchange(false, ordering: .relaxed) {
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

import RunLog
import Synchronization

/// What built-ins keep from cell to cell: random numbers, generation defaults, background jobs,
/// and the run log with where the current cell comes from.
final class SessionState: Sendable {
    /// The run log generations and measurements are recorded in (nil: not recorded).
    let runLog: RunLog?
    /// Whether recording is on (`%log off` turns it off for the session).
    let logging = Mutex(true)
    /// Where the running cell comes from (front end, notebook, cell id, execution count).
    let origin: Mutex<RunOrigin>

    /// The host objects the running cell has already shown live (a generation's streaming
    /// display), which are not shown again as the cell's result.
    let shownLive = Mutex<[any HostObject]>([])

    init(runLog: RunLog?, origin: RunOrigin) {
        self.runLog = runLog
        self.origin = Mutex(origin)
    }

    /// Queues `record` in the run log, when there is one and recording is on.
    func record(_ record: RunRecord) {
        guard let runLog, logging.withLock({ $0 }) else { return }
        runLog.record(record)
    }

    /// The session's random numbers.
    let random = SessionRandom()
    /// Generation options set by `defaults(…)` or `%defaults`, by label.
    let generationDefaults = Mutex<[String: Value]>([:])
    /// Background jobs started by `spawn`.
    let jobs = JobList()
}

/// A session's random numbers (SplitMix64): seeded from the system at start, reseeded by
/// `random(seed:)`, so an experiment can be made repeatable.
final class SessionRandom: Sendable {
    private let state = Mutex<UInt64>(UInt64.random(in: 0...UInt64.max))

    /// Restarts the sequence from `seed`.
    func reseed(_ seed: UInt64) {
        state.withLock { $0 = seed }
    }

    /// The next 64 random bits.
    func next() -> UInt64 {
        state.withLock { state in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// A uniform Double in [0, 1).
    func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }
}

import Synchronization

/// What built-ins keep from cell to cell: the session's libraries and the built-ins they give,
/// random numbers, background jobs and the comms open to the front end.
final class SessionState: Sendable {
    /// The libraries plugged into this session, one instance each.
    let libraries: [any LumenLibrary]
    /// Every built-in of the session: the standard library's, then each library's, by name.
    let builtins: [String: Builtin]
    /// The magics the libraries add, in the libraries' order.
    let libraryMagics: [Magic]
    init(libraries: [any LumenLibrary]) {
        self.libraries = libraries
        let all = StandardLibrary.all + libraries.flatMap(\.builtins)
        builtins = Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        libraryMagics = libraries.flatMap(\.magics)
    }

    /// The session's random numbers.
    let random = SessionRandom()
    /// Background jobs started by `spawn`.
    let jobs = JobList()
    /// The comms open to the front end (widgets).
    let comms = CommRegistry()
}

/// What belongs to one running cell rather than to the session: where it comes from and what it
/// has shown live. Cells of several shells (JEP 91 subshells) and comm messages are handled at
/// once, each in a task of its own, so this is a task-local value, never a session's.
final class RunningCell: Sendable {
    /// The cell the current task runs (outside any cell, a new one of count 0).
    @TaskLocal static var current = RunningCell(origin: CellOrigin(executionCount: 0, cellID: nil))

    /// Where the cell comes from.
    let origin: CellOrigin
    /// The cell's thread id for the debugger (0: code that runs outside a cell, which never stops).
    let thread: Int

    /// What the cell has already shown live, each a host object (a generation's streaming
    /// display) or the host objects of an array (a batch's table), which are not shown again as
    /// the cell's result.
    let shownLive = Mutex<[[any HostObject]]>([])

    init(origin: CellOrigin, thread: Int = 0) {
        self.origin = origin
        self.thread = thread
    }

    /// Whether `value` is something the cell has already shown live.
    func wasShownLive(_ value: Value) -> Bool {
        guard let objects = Self.hostObjects(of: value) else { return false }
        return shownLive.withLock { shown in
            shown.contains { $0.count == objects.count && zip($0, objects).allSatisfy { $0 === $1 } }
        }
    }

    /// The host object `value` is, or the host objects an array of them holds.
    static func hostObjects(of value: Value) -> [any HostObject]? {
        switch value {
        case .host(let object): [object]
        case .array(let items) where !items.isEmpty:
            items.allSatisfy { if case .host = $0 { true } else { false } }
                ? items.compactMap { if case .host(let object) = $0 { object } else { nil } } : nil
        default: nil
        }
    }
}

/// Where a running cell comes from, as its request says: its execution count and, when the
/// front end sends it, the notebook cell's id.
public struct CellOrigin: Sendable, Equatable {
    /// The cell's execution count (`In[3]`).
    public var executionCount: Int
    /// The notebook cell's id, when known.
    public var cellID: String?
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

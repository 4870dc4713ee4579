import CSQLite
import Evaluation
import Executors
import Foundation
import Synchronization

/// Execution history persisted across sessions in an SQLite database (by default
/// `$XDG_DATA_HOME/lumen/history.sqlite`). Each store opens a new session; entries are written in
/// order by this actor, off the path of the request that produced them, on a thread of its own
/// (file I/O never occupies the cooperative pool).
public actor HistoryStore {
    private let executor = ThreadExecutor(name: "lumen-history")
    /// The store's dedicated thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// An open SQLite connection, closed when released. Used only by the actor that owns it.
    private final class Connection {
        let handle: OpaquePointer

        init(_ handle: OpaquePointer) {
            self.handle = handle
        }

        deinit {
            sqlite3_close(handle)
        }
    }

    private let connection: Connection
    /// This session's number (the first session ever is 1).
    public nonisolated let session: Int
    /// Entries of earlier sessions, oldest first (at most the last 10 000).
    public nonisolated let earlierEntries: [HistoryEntry]
    private nonisolated let writes: AsyncStream<HistoryEntry>.Continuation
    private nonisolated let queued = Atomic<Int>(0)
    private var written = 0
    private var flushWaiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// The default database path: `$XDG_DATA_HOME/lumen` or `~/.local/share/lumen`.
    public static var defaultPath: String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share").path
        return base + "/lumen/history.sqlite"
    }

    /// Opens (creating if needed) the database at `path` and starts a new session.
    public init(path: String = HistoryStore.defaultPath) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        var handle: OpaquePointer?
        guard sqlite3_open(path, &handle) == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw HistoryError(path: path, message: message)
        }
        func execute(_ sql: String) throws {
            guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
                let message = String(cString: sqlite3_errmsg(handle))
                sqlite3_close(handle)
                throw HistoryError(path: path, message: message)
            }
        }
        try execute("""
            PRAGMA busy_timeout = 2000;
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = NORMAL;
            CREATE TABLE IF NOT EXISTS sessions (session INTEGER PRIMARY KEY AUTOINCREMENT, start TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS history (session INTEGER NOT NULL, line INTEGER NOT NULL, source TEXT NOT NULL,
                                                PRIMARY KEY (session, line));
            INSERT INTO sessions (start) VALUES (datetime('now'));
            """)
        session = Int(sqlite3_last_insert_rowid(handle))
        earlierEntries = Self.query(handle, "SELECT session, line, source FROM (SELECT * FROM history ORDER BY session DESC, line DESC LIMIT 10000) ORDER BY session, line")
        connection = Connection(handle)
        let (stream, continuation) = AsyncStream.makeStream(of: HistoryEntry.self)
        writes = continuation
        Task { [weak self] in
            for await entry in stream {
                await self?.write(entry)
            }
        }
    }

    deinit {
        writes.finish()
    }

    /// Queues `entry` to be written; returns at once. Entries are written in the order queued.
    public nonisolated func record(_ entry: HistoryEntry) {
        queued.add(1, ordering: .sequentiallyConsistent)
        writes.yield(entry)
    }

    /// Returns when every entry recorded before the call is written.
    public func flush() async {
        let target = queued.load(ordering: .sequentiallyConsistent)
        guard written < target else { return }
        await withCheckedContinuation { flushWaiters.append((target, $0)) }
    }

    private func write(_ entry: HistoryEntry) {
        defer {
            written += 1
            let ready = flushWaiters.filter { $0.target <= written }
            flushWaiters.removeAll { $0.target <= written }
            for waiter in ready { waiter.continuation.resume() }
        }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection.handle, "INSERT OR REPLACE INTO history (session, line, source) VALUES (?, ?, ?)", -1, &statement, nil) == SQLITE_OK else { return }
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_int64(statement, 1, Int64(entry.session))
        sqlite3_bind_int64(statement, 2, Int64(entry.line))
        sqlite3_bind_text(statement, 3, entry.input, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        sqlite3_step(statement)
    }

    private static func query(_ database: OpaquePointer, _ sql: String) -> [HistoryEntry] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK else { return [] }
        defer { sqlite3_finalize(statement) }
        var entries: [HistoryEntry] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            let source = sqlite3_column_text(statement, 2).map { String(cString: $0) } ?? ""
            entries.append(HistoryEntry(session: Int(sqlite3_column_int64(statement, 0)), line: Int(sqlite3_column_int64(statement, 1)), input: source))
        }
        return entries
    }
}

/// The history database could not be opened.
public struct HistoryError: Error, CustomStringConvertible {
    /// The database file.
    public let path: String
    /// SQLite's message.
    public let message: String

    public var description: String { "history database \(path): \(message)" }
}

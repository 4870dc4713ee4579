import Evaluation
import Executors
import Foundation
import GRDB
import Synchronization

/// Execution history persisted across sessions in an SQLite database (by default
/// `$XDG_DATA_HOME/lumen/history.sqlite`), through GRDB. Each store opens a new session; entries
/// are written in order by this actor, off the path of the request that produced them, on a
/// thread of its own (file I/O never occupies the cooperative pool).
public actor HistoryStore {
    private let executor = ThreadExecutor(name: "lumen-history")
    /// The store's dedicated thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// One row of the history table.
    private struct Row: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "history"
        var session: Int
        var line: Int
        var source: String
    }

    private let database: DatabaseQueue
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

    /// The schema, versioned by GRDB's migrator (the first version matches the tables earlier
    /// Lumen releases created by hand, so their databases carry on).
    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: sessions and history") { db in
            try db.create(table: "sessions", ifNotExists: true) { table in
                table.autoIncrementedPrimaryKey("session")
                table.column("start", .text).notNull()
            }
            try db.create(table: Row.databaseTableName, ifNotExists: true) { table in
                table.column("session", .integer).notNull()
                table.column("line", .integer).notNull()
                table.column("source", .text).notNull()
                table.primaryKey(["session", "line"])
            }
        }
        return migrator
    }

    /// Opens (creating if needed) the database at `path` and starts a new session.
    public init(path: String = HistoryStore.defaultPath) throws {
        do {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            var configuration = Configuration()
            configuration.busyMode = .timeout(2)
            configuration.journalMode = .wal
            database = try DatabaseQueue(path: path, configuration: configuration)
            try Self.migrator.migrate(database)
            (session, earlierEntries) = try database.write { db in
                try db.execute(sql: "INSERT INTO sessions (start) VALUES (datetime('now'))")
                let rows = try Row.fetchAll(db, sql: "SELECT * FROM (SELECT * FROM history ORDER BY session DESC, line DESC LIMIT 10000) ORDER BY session, line")
                return (Int(db.lastInsertedRowID), rows.map { HistoryEntry(session: $0.session, line: $0.line, input: $0.source) })
            }
        } catch {
            throw HistoryError(path: path, message: "\(error)")
        }
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
        // History is a convenience: an entry that cannot be written is skipped.
        try? database.write { db in try Row(session: entry.session, line: entry.line, source: entry.input).save(db) }
    }
}

/// The history database could not be opened.
public struct HistoryError: Error, CustomStringConvertible {
    /// The database file.
    public let path: String
    /// What went wrong.
    public let message: String

    public var description: String { "history database \(path): \(message)" }
}

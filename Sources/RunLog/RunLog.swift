import Executors
import Foundation
import GRDB
// The records' types, which every user of the log names.
@_exported import RunRecords

/// The run log: every generation, perplexity and comparison, in a SQLite database (GRDB, WAL).
///
/// Runs are handed over with `record`, which never waits: it puts the record in a bounded queue
/// (`RecordQueue`) and wakes the writer. The writer runs on the log's own thread (this actor's
/// executor, which owns the database connection), takes everything waiting and writes it in one
/// transaction, so a generation never waits for the disk and records reach the disk as soon as
/// they are finished. A failed write (a full disk, a database locked for too long) is reported
/// through `warn` and drops those records; it never fails the run that made them.
public actor RunLog: RunRecording {
    private let executor: ThreadExecutor
    /// The log's dedicated thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// The database file.
    public nonisolated let path: String
    private let database: DatabasePool
    private let queue: RecordQueue
    private let wakeups: AsyncStream<Void>.Continuation
    private let warn: @Sendable (String) -> Void
    private var digests: [String: FileDigest] = [:]

    /// Opens (creating or upgrading) the log at `path`; blocking, so see `open`.
    init(path: String, capacity: Int, busyTimeout: Double, warn: @escaping @Sendable (String) -> Void) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "lumen-run-log"
        // In WAL mode, NORMAL commits without waiting for the disk; a committed run still
        // survives the process being killed (only a power cut can lose the last commits).
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        database = try DatabasePool(path: path, configuration: configuration)
        try RunLogSchema.migrator.migrate(database)
        self.path = path
        self.warn = warn
        queue = RecordQueue(capacity: capacity)
        executor = ThreadExecutor(name: "lumen-run-log")
        let (wakeups, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.wakeups = continuation
        Task { await self.writeAll(woken: wakeups) }
    }

    /// Opens the log at `path` on a thread of its own. `capacity` bounds the records waiting to
    /// be written; a write waits up to `busyTimeout` seconds for another program's lock; `warn`
    /// hears about records that could not be written.
    public static func open(path: String, capacity: Int = 4096, busyTimeout: Double = 5,
                            warn: @escaping @Sendable (String) -> Void) async throws -> RunLog {
        try await DedicatedThread.run(name: "lumen-run-log-open") { () throws(any Error) in
            try RunLog(path: path, capacity: capacity, busyTimeout: busyTimeout, warn: warn)
        }
    }

    /// Queues `record` to be written, without waiting.
    public nonisolated func record(_ record: RunRecord) {
        // A full queue counts the record as dropped; the writer reports it when it next wakes.
        _ = queue.push(record)
        wakeups.yield()
    }

    /// Writes every record queued so far, and returns when they are on disk.
    public func flush() {
        writePending()
    }

    private func writeAll(woken: AsyncStream<Void>) async {
        for await _ in woken { writePending() }
    }

    private func writePending() {
        let (records, dropped) = queue.takeAll()
        if dropped > 0 { warn("run log: \(dropped) records dropped (more than the queue holds were waiting)") }
        guard !records.isEmpty else { return }
        var withDigests = records
        for index in withDigests.indices {
            withDigests[index].model.sha256 = withDigests[index].model.sha256 ?? digest(of: withDigests[index].model.path)
            if let base = withDigests[index].baseModel { withDigests[index].baseModel?.sha256 = base.sha256 ?? digest(of: base.path) }
            for (position, adapter) in (withDigests[index].model.adapters ?? []).enumerated() {
                withDigests[index].model.adapters?[position].sha256 = adapter.sha256 ?? digest(of: adapter.path)
            }
        }
        // One transaction for the batch; a record that cannot be encoded is reported and skipped
        // without losing the others.
        var rejected: [String] = []
        do {
            try database.write { db in
                for var record in withDigests {
                    do {
                        try record.insert(db)
                    } catch let error as EncodingError {
                        rejected.append("\(error)")
                    }
                }
            }
            if let first = rejected.first { warn("run log: \(rejected.count) records not written: \(first)") }
        } catch {
            warn("run log: \(records.count) records not written to \(path): \(error)")
        }
    }

    /// The SHA-256 of the file at `path`, computed now (without a run log to remember it), as
    /// lowercase hexadecimal; nil if it cannot be read.
    public static func digest(ofFile path: String) -> String? {
        FileDigest.compute(path: path)?.sha256
    }

    /// The SHA-256 of the file at `path`, remembered by `log` when there is one, else computed
    /// on a thread of its own (hashing a model file is long blocking work).
    public static func digest(of path: String, rememberedBy log: RunLog?) async -> String? {
        if let log { return await log.digest(of: path) }
        return await DedicatedThread.run(name: "lumen-digest") { digest(ofFile: path) }
    }

    /// The SHA-256 of the file at `path`: from memory, from the log's table when the file has not
    /// changed since, or computed (once) now.
    public func digest(of path: String) -> String? {
        guard let stamp = FileDigest.stamp(of: path) else { return nil }
        if let known = digests[path], known.size == stamp.size, known.modified == stamp.modified { return known.sha256 }
        let stored = try? database.read { db in try FileDigest.fetchOne(db, key: path) }
        if let stored, stored.size == stamp.size, stored.modified == stamp.modified {
            digests[path] = stored
            return stored.sha256
        }
        guard let computed = FileDigest.compute(path: path) else { return nil }
        digests[path] = computed
        try? database.write { db in try computed.save(db) }
        return computed.sha256
    }

    /// Adds `records` as they are, numbers included (`lumen log import`); a number the log
    /// already has is an error, and nothing is added.
    public func importRecords(_ records: [RunRecord]) throws {
        writePending()
        try database.write { db in
            for var record in records { try record.insert(db) }
        }
    }

    // MARK: - Reading

    /// The runs `query` selects, newest first (after writing what is queued).
    public func runs(_ query: RunQuery) throws -> [RunRecord] {
        writePending()
        return try database.read { db in
            var request = RunRecord.order(Column("id").desc)
            if let model = query.model {
                request = request.filter(sql: "json_extract(model, '$.name') LIKE ? OR json_extract(model, '$.path') LIKE ?",
                                         arguments: ["%\(model)%", "%\(model)%"])
            }
            if let since = query.since { request = request.filter(Column("time") >= since) }
            if let text = query.contains {
                request = request.filter(sql: "prompt LIKE ? OR output LIKE ?", arguments: ["%\(text)%", "%\(text)%"])
            }
            if let kind = query.kind { request = request.filter(Column("kind") == kind) }
            if let limit = query.limit { request = request.limit(limit) }
            return try request.fetchAll(db)
        }
    }

    /// The run numbered `id`, if the log has it.
    public func run(id: Int64) throws -> RunRecord? {
        writePending()
        return try database.read { db in try RunRecord.fetchOne(db, key: id) }
    }

    /// What the log holds.
    public func statistics() throws -> RunStatistics {
        writePending()
        // Counted by SQLite: the records themselves (token arrays and all) are never loaded.
        return try database.read { db in
            func counts(_ column: String) throws -> [String: Int] {
                let rows = try Row.fetchAll(db, sql: "SELECT \(column) AS key, count(*) AS count FROM run GROUP BY key")
                return Dictionary(uniqueKeysWithValues: rows.map { (($0["key"] as String?) ?? "", $0["count"] as Int) })
            }
            let totals = try Row.fetchOne(db, sql: """
                SELECT count(*) AS runs, coalesce(sum(generatedTokens), 0) AS tokens, coalesce(sum(interrupted), 0) AS interrupted,
                       min(time) AS first, max(time) AS last FROM run
                """)
            return RunStatistics(runs: totals?["runs"] ?? 0, byKind: try counts("kind"), byModel: try counts("json_extract(model, '$.name')"),
                                 generatedTokens: totals?["tokens"] ?? 0, interrupted: totals?["interrupted"] ?? 0,
                                 first: (totals?["first"] as Double?).map(Date.init(timeIntervalSince1970:)),
                                 last: (totals?["last"] as Double?).map(Date.init(timeIntervalSince1970:)))
        }
    }
}

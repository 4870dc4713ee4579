import Foundation
import Synchronization
import Testing
@testable import RunLog

/// The run log against SQLite itself (the `sqlite3` shell reads what it wrote) and `sha256sum`.
struct RunLogTests {
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("lumen-runlog-\(UUID().uuidString)/runs.sqlite").path
    }

    static func sample(prompt: String, model path: String) -> RunRecord {
        RunRecord(time: Date(timeIntervalSince1970: 1_800_000_000.25), entry: "generate",
                  origin: RunOrigin(frontEnd: "kernel", notebook: "experiments/a.ipynb", cell: "c-1", executionCount: 3),
                  model: RunModel(name: "tiny", path: path, architecture: "llama", tensorTypes: "F32 ×48"),
                  options: RunOptions(maxTokens: 8, temperature: 0.7, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1.1, seed: UInt64.max - 5, stop: ["\n\n"]),
                  prompt: prompt, output: " there was", tokenIDs: [1, 403, 407], logProbabilities: [-0.125, -1.0e-7, -3.3333333],
                  finishReason: "length", promptTokens: 5, generatedTokens: 3, promptTokensPerSecond: 512.5, tokensPerSecond: 88.25,
                  timeToFirstToken: 0.0125, interrupted: false)
    }

    static func shell(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test func recordsRoundTripAndCarryTheModelFilesSHA256() async throws {
        let path = Self.temporaryPath()
        let model = FileManager.default.temporaryDirectory.appendingPathComponent("lumen-runlog-model-\(UUID().uuidString).gguf").path
        try Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: model))
        let log = try await RunLog.open(path: path) { Issue.record("unexpected warning: \($0)") }
        let records = [Self.sample(prompt: "Once upon a time", model: model), Self.sample(prompt: "The cat", model: model)]
        for record in records { log.record(record) }
        await log.flush()
        let read = try await log.runs(RunQuery())
        #expect(read.count == 2 && read.map(\.prompt) == ["The cat", "Once upon a time"])
        let expectedDigest = try Self.shell(["sha256sum", model]).split(separator: " ").first.map(String.init)
        for (ours, original) in zip(read.reversed(), records) {
            var withDigest = original
            withDigest.id = ours.id
            withDigest.model.sha256 = expectedDigest
            #expect(ours == withDigest)
        }
        // The database is plain SQLite in WAL mode, readable by other programs.
        #expect(try Self.shell(["sqlite3", path, "PRAGMA journal_mode; SELECT count(*) FROM run; SELECT json_extract(model, '$.name') FROM run LIMIT 1;"])
                == "wal\n2\ntiny\n")
        #expect(try await log.runs(RunQuery(contains: "cat")).map(\.prompt) == ["The cat"])
        #expect(try await log.runs(RunQuery(model: "nothing-like-it")).isEmpty)
        #expect(try await log.statistics().generatedTokens == 6)
    }

    @Test func nonFiniteFiguresAreKeptNotFatalToTheBatch() async throws {
        let log = try await RunLog.open(path: Self.temporaryPath()) { Issue.record("unexpected warning: \($0)") }
        var odd = Self.sample(prompt: "one token", model: "/nonexistent")
        odd.figures = ["correlation": .nan, "ratio": .infinity, "tokens": 1]
        log.record(odd)
        log.record(Self.sample(prompt: "ordinary", model: "/nonexistent"))
        let read = try await log.runs(RunQuery())
        #expect(read.map(\.prompt) == ["ordinary", "one token"])
        let figures = try #require(read.last?.figures)
        #expect(figures["correlation"]?.isNaN == true && figures["ratio"] == .infinity && figures["tokens"] == 1)
        let line = try RunRecordJSON.encoder.encode(try #require(read.last))
        #expect(try RunRecordJSON.decoder.decode(RunRecord.self, from: line).figures?["ratio"] == .infinity)
    }

    @Test func aFullQueueDropsAndCountsInsteadOfWaiting() {
        let queue = RecordQueue(capacity: 2)
        let record = Self.sample(prompt: "x", model: "/nonexistent")
        #expect([queue.push(record), queue.push(record), queue.push(record)] == [true, true, false])
        let (records, dropped) = queue.takeAll()
        #expect(records.count == 2 && dropped == 1)
        #expect(queue.takeAll().records.isEmpty)
    }

    @Test func aLockedDatabaseWarnsAndLosesOnlyTheRecordsItHeldUp() async throws {
        let path = Self.temporaryPath()
        let warnings = WarningList()
        let log = try await RunLog.open(path: path, busyTimeout: 0.2) { warnings.append($0) }
        log.record(Self.sample(prompt: "before", model: "/nonexistent"))
        await log.flush()
        // Another program holds the write lock until told to let go.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = ["python3", "-c", """
            import sqlite3, sys
            connection = sqlite3.connect(sys.argv[1], isolation_level=None)
            connection.execute("BEGIN EXCLUSIVE")
            print("locked", flush=True)
            sys.stdin.readline()
            connection.execute("COMMIT")
            """, path]
        let (input, output) = (Pipe(), Pipe())
        holder.standardInput = input
        holder.standardOutput = output
        try holder.run()
        #expect(String(decoding: output.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("locked"))
        log.record(Self.sample(prompt: "held up", model: "/nonexistent"))
        await log.flush()
        input.fileHandleForWriting.write(Data("\n".utf8))
        holder.waitUntilExit()
        #expect(warnings.all.count == 1 && warnings.all[0].contains("1 records not written"), "\(warnings.all)")
        log.record(Self.sample(prompt: "after", model: "/nonexistent"))
        #expect(try await log.runs(RunQuery()).map(\.prompt) == ["after", "before"])
    }
}

/// Warnings collected from the log's thread.
final class WarningList: Sendable {
    private let list = Mutex<[String]>([])
    func append(_ warning: String) { list.withLock { $0.append(warning) } }
    var all: [String] { list.withLock { $0 } }
}

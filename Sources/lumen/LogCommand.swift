import ArgumentParser
import Foundation
import ModelBuiltins
import RunLog

/// `lumen log`: reads the run log (every generation, perplexity and comparison Lumen recorded).
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "List, show, export, import and count the runs in the run log.",
        discussion: "The log is at LUMEN_LOG_PATH, else $XDG_DATA_HOME/lumen/runs.sqlite (~/.local/share/lumen/runs.sqlite).",
        subcommands: [List.self, Show.self, Export.self, Import.self, Stats.self]
    )

    /// Opens the log (an empty one where nothing has been logged yet).
    static func open() async throws -> RunLog {
        try await RunLog.open(path: RunLogLocation.path) { FileHandle.standardError.write(Data("warning: \($0)\n".utf8)) }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List runs, newest first.")

        @Option(help: "Only runs whose model name or path contains this text.")
        var model: String?

        @Option(help: "Only runs since this date (2026-11-23 or \"2026-11-23 14:00\").")
        var since: String?

        @Option(help: "Only runs whose prompt or output contains this text.")
        var contains: String?

        @Option(help: ArgumentHelp("Only runs of this kind: \(RunKind.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "kind"))
        var kind: String?

        @Option(name: [.customShort("n"), .long], help: "At most this many runs.")
        var limit = 20

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            _ = global.bootstrapLogging(label: "lumen.log")
            let date = try since.map { text in
                guard let date = RunLibrary.parseDate(text) else { throw ValidationError("--since needs a date like 2026-11-23, got \(text)") }
                return date
            }
            let kind = try kind.map { name in
                do { return try RunKind(named: name) } catch { throw ValidationError("--kind: \(error)") }
            }
            let runs = try await LogCommand.open().runs(RunQuery(model: model, since: date, contains: contains, kind: kind, limit: limit))
            print(RunList(runs).mimeBundle.plainText ?? "")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show everything the log keeps about one run.")

        @ArgumentParser.Argument(help: "The run's id (lumen log list shows them).")
        var id: Int64

        @Flag(help: "Print the record as JSON (the form export writes).")
        var json = false

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            _ = global.bootstrapLogging(label: "lumen.log")
            guard let record = try await LogCommand.open().run(id: id) else { throw CommandError("the log has no run \(id)") }
            if json {
                print(String(decoding: try RunRecordJSON.encoder.encode(record), as: UTF8.self))
            } else {
                print(LoggedRun(record).mimeBundle.plainText ?? "")
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write every run as JSON Lines (oldest first), to stdout or a file; lumen log import reads it back.")

        @Flag(help: "JSON Lines, one run per line (the only format; accepted for clarity).")
        var jsonl = false

        @Option(name: [.customShort("o"), .long], help: "Write to this file instead of stdout.")
        var output: String?

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            _ = global.bootstrapLogging(label: "lumen.log")
            let runs = try await LogCommand.open().runs(RunQuery()).reversed()
            var text = Data()
            for record in runs {
                text.append(try RunRecordJSON.encoder.encode(record))
                text.append(0x0A)
            }
            if let output {
                do { try text.write(to: URL(fileURLWithPath: output)) } catch { throw CommandError("cannot write \(output): \(error.localizedDescription)") }
            } else {
                FileHandle.standardOutput.write(text)
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add the runs of a JSON Lines export to the log, keeping their ids.")

        @ArgumentParser.Argument(help: "A file lumen log export wrote.")
        var file: String

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            _ = global.bootstrapLogging(label: "lumen.log")
            guard let data = FileManager.default.contents(atPath: file) else { throw CommandError("cannot read \(file)") }
            var records: [RunRecord] = []
            for (number, line) in data.split(separator: 0x0A).enumerated() where !line.isEmpty {
                do {
                    records.append(try RunRecordJSON.decoder.decode(RunRecord.self, from: Data(line)))
                } catch {
                    throw CommandError("\(file):\(number + 1): not a run record: \(error)")
                }
            }
            let log = try await LogCommand.open()
            try await log.importRecords(records)
            print("imported \(records.count) runs into \(log.path)")
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Count the runs by kind and model.")

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            _ = global.bootstrapLogging(label: "lumen.log")
            let log = try await LogCommand.open()
            let statistics = try await log.statistics()
            var lines = ["log          \(log.path)", "runs         \(statistics.runs)", "interrupted  \(statistics.interrupted)",
                         "tokens       \(statistics.generatedTokens) generated"]
            if let first = statistics.first, let last = statistics.last {
                lines.append("from         \(LoggedRun.format(first)) to \(LoggedRun.format(last))")
            }
            lines += statistics.byKind.sorted { $0.key < $1.key }.map { "kind         \($0.key): \($0.value)" }
            lines += statistics.byModel.sorted { $0.value > $1.value }.map { "model        \($0.key): \($0.value)" }
            print(lines.joined(separator: "\n"))
        }
    }
}

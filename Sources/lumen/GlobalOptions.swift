import ArgumentParser
import Logging
import RunLog

/// Options every subcommand accepts.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Log level on stderr: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .warning

    @Flag(name: .customLong("no-log"), help: "Do not record runs in the run log (LUMEN_LOG=0 does the same; LUMEN_LOG_PATH moves it).")
    var noLog = false

    /// The run log, unless `--no-log` or `LUMEN_LOG=0` turns it off; a log that cannot be opened
    /// is a warning, and the command runs without it.
    func openRunLog(logger: Logger) async -> RunLog? {
        guard !noLog, !RunLogLocation.isDisabled else { return nil }
        let path = RunLogLocation.path
        do {
            return try await RunLog.open(path: path) { warning in logger.warning("\(warning)") }
        } catch {
            logger.warning("runs will not be logged: cannot open \(path): \(error)")
            return nil
        }
    }

    /// Sends swift-log output to stderr at the chosen level and returns a logger labelled `label`.
    func bootstrapLogging(label: String) -> Logger {
        let level = logLevel
        LoggingSystem.bootstrap { name in
            var handler = StreamLogHandler.standardError(label: name)
            handler.logLevel = level
            return handler
        }
        return Logger(label: label)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

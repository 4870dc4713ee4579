import ArgumentParser
import Logging

/// Options every subcommand accepts.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Log level on stderr: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .warning

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

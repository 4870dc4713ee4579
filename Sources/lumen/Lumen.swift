import ArgumentParser
import Foundation

/// The `lumen` command: a Jupyter kernel and tools for language-model experiments.
@main
struct Lumen: AsyncParsableCommand {
    /// The version of Lumen, shown by `--version` and in `kernel_info_reply`.
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "lumen",
        abstract: "A Jupyter kernel and REPL for language-model inference experiments.",
        version: version,
        subcommands: [KernelCommand.self, ReplCommand.self, RunCommand.self, InstallCommand.self, UninstallCommand.self, GenerateCommand.self, BenchCommand.self, InfoCommand.self, QuantizeCommand.self, ExportLoRACommand.self, TokenizeCommand.self, TemplateCommand.self, ChatCommand.self, PerplexityCommand.self, KLDivergenceCommand.self, SteeringCommand.self, TraceCommand.self, LogCommand.self, ServeCommand.self]
    )

    /// The exit status of a usage error (a bad option or argument, a refused combination): 2, as
    /// argparse and getopt-style tools give and as `lumen run` documents, not ArgumentParser's 64.
    static let usageErrorStatus: Int32 = 2

    /// Parses the command line and runs the command. Errors in parsing are reported as
    /// ArgumentParser reports them; a usage error found while the command runs (a
    /// `ValidationError`) with that command's usage (not the top level's); any other error from
    /// a command's work as `Error: …` alone. Usage errors exit `usageErrorStatus`.
    static func main() async {
        var parsed: (any ParsableCommand)?
        do {
            var command = try parseAsRoot()
            parsed = command
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            let status = exitCode(for: error) == .validationFailure ? usageErrorStatus : exitCode(for: error).rawValue
            // Help, an exit status and a parse error are ArgumentParser's to report.
            guard let command = parsed.map({ type(of: $0) }), let path = path(to: command),
                  exitCode(for: error) != .success, !(error is ExitCode) else {
                guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(usageErrorStatus)
            }
            let usage = exitCode(for: error) == .validationFailure
                ? "Usage: \(usageString(for: command))\n  See 'lumen \(path.joined(separator: " ")) --help' for more information.\n" : ""
            FileHandle.standardError.write(Data("Error: \(message(for: error))\n\(usage)".utf8))
            Foundation.exit(status)
        }
    }

    /// The names leading from `lumen` to `command` (`["log", "list"]`), if it is a subcommand.
    static func path(to command: any ParsableCommand.Type, from root: any ParsableCommand.Type = Lumen.self) -> [String]? {
        for subcommand in root.configuration.subcommands {
            let name = subcommand._commandName
            if subcommand == command { return [name] }
            if let rest = path(to: command, from: subcommand) { return [name] + rest }
        }
        return nil
    }
}

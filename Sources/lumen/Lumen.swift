import ArgumentParser

/// The `lumen` command: a Jupyter kernel and tools for language-model experiments.
@main
struct Lumen: AsyncParsableCommand {
    /// The version of Lumen, shown by `--version` and in `kernel_info_reply`.
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "lumen",
        abstract: "A Jupyter kernel and REPL for language-model inference experiments.",
        version: version,
        subcommands: [KernelCommand.self, ReplCommand.self, RunCommand.self, InstallCommand.self, UninstallCommand.self, GenerateCommand.self, BenchCommand.self, InfoCommand.self, QuantizeCommand.self, TokenizeCommand.self, TemplateCommand.self, ChatCommand.self]
    )
}

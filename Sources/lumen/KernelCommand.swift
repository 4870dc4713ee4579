import ArgumentParser
import Executors
import Foundation
import JupyterProtocol
import JupyterKernel
import LumenLanguage
import ModelBuiltins

/// `lumen kernel -f CONNECTION_FILE`: serves the Jupyter protocol, as front ends launch it.
struct KernelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kernel",
        abstract: "Run as a Jupyter kernel (front ends start this through the kernelspec)."
    )

    @Option(name: [.customShort("f"), .customLong("connection-file")], help: "The connection file Jupyter wrote for this kernel.")
    var connectionFile: String

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let logger = global.bootstrapLogging(label: "lumen.kernel")
        let connection: ConnectionInfo
        do {
            connection = try ConnectionInfo.load(from: connectionFile)
        } catch {
            throw CommandError(error.description)
        }
        // Jupyter's server tells a kernel its notebook's path in JPY_SESSION_NAME.
        let runLog = await global.openRunLog(logger: logger)
        let interpreter = Interpreter(libraries: ModelHost.libraries(runLog: runLog, frontEnd: "kernel", notebook: ProcessInfo.processInfo.environment["JPY_SESSION_NAME"]))
        // The history database opens beside start-up, on a thread of its own (file I/O), so the
        // sockets bind as early as possible.
        Task(priority: .utility) {
            do {
                let store = try await DedicatedThread.run(name: "lumen-history-open") { try HistoryStore() }
                await interpreter.attachHistory(store)
            } catch {
                logger.warning("history will not be kept: \(error)")
            }
        }
        let server = KernelServer(connection: connection, evaluator: interpreter, info: Self.kernelInfo, logger: logger)
        _ = try await server.run()
        await runLog?.flush()
    }

    /// What the kernel says about itself in `kernel_info_reply`.
    static let kernelInfo = KernelInfoReply(
        protocolVersion: MessageFactory.protocolVersion,
        implementation: "lumen",
        implementationVersion: Lumen.version,
        languageInfo: LanguageInfo(
            name: "lumen",
            version: Lumen.version,
            mimetype: "text/x-lumen",
            fileExtension: ".lumen",
            pygmentsLexer: "swift",
            codemirrorMode: "swift"
        ),
        banner: "Lumen \(Lumen.version): a Swift-flavoured kernel for language-model experiments.\nType help(name) or name? for documentation.",
        helpLinks: [
            HelpLink(text: "Swift language guide", url: "https://docs.swift.org/swift-book/"),
            HelpLink(text: "Jupyter documentation", url: "https://docs.jupyter.org/"),
        ],
        // JEP 65: each new IOPub subscriber gets an `iopub_welcome`.
        supportedFeatures: ["iopub_welcome", "kernel subshells"]
    )
}

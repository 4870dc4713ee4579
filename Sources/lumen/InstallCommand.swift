import ArgumentParser
import Foundation

/// `lumen install`: writes a kernelspec so Jupyter front ends can start Lumen.
struct InstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Install the Lumen kernelspec for Jupyter."
    )

    @OptionGroup var location: KernelspecLocation

    @Option(help: "The name front ends show for the kernel.")
    var displayName = "Lumen"

    @OptionGroup var global: GlobalOptions

    func run() throws {
        _ = global.bootstrapLogging(label: "lumen.install")
        let directory = try location.directory()
        let fileManager = FileManager.default
        try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        let spec: [String: Any] = [
            "argv": [try Self.executablePath(), "kernel", "-f", "{connection_file}"],
            "display_name": displayName,
            "language": "lumen",
            "interrupt_mode": "message",
            "metadata": ["debugger": true],
        ]
        let json = try JSONSerialization.data(withJSONObject: spec, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        try json.write(to: directory.appendingPathComponent("kernel.json"), options: .atomic)
        var missingLogos: [String] = []
        for logo in Self.logos {
            let source = Self.kernelspecSources.appendingPathComponent(logo)
            let destination = directory.appendingPathComponent(logo)
            guard fileManager.fileExists(atPath: source.path) else {
                missingLogos.append(logo)
                continue
            }
            try? fileManager.removeItem(at: destination)
            try fileManager.copyItem(at: source, to: destination)
        }
        if !missingLogos.isEmpty {
            FileHandle.standardError.write(Data("warning: logos not found in \(Self.kernelspecSources.path): \(missingLogos.joined(separator: ", "))\n".utf8))
        }
        print("Installed kernelspec \(location.name) in \(directory.path)")
    }

    static let logos = ["logo-32x32.png", "logo-64x64.png", "logo-svg.svg"]

    /// The repository's `kernelspec/` folder, which holds the logos.
    static let kernelspecSources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("kernelspec")

    /// The absolute path of the running `lumen` binary, symlinks resolved.
    static func executablePath() throws -> String {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return path
        }
        let argument = CommandLine.arguments[0]
        let url = argument.hasPrefix("/") ? URL(fileURLWithPath: argument)
            : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(argument)
        return url.standardizedFileURL.resolvingSymlinksInPath().path
    }
}

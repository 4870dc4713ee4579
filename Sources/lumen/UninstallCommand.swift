import ArgumentParser
import Foundation

/// `lumen uninstall`: removes a kernelspec written by `lumen install`.
struct UninstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uninstall",
        abstract: "Remove the Lumen kernelspec."
    )

    @OptionGroup var location: KernelspecLocation

    @OptionGroup var global: GlobalOptions

    func run() throws {
        _ = global.bootstrapLogging(label: "lumen.uninstall")
        let directory = try location.directory()
        guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("kernel.json").path) else {
            throw CommandError("no kernelspec named \(location.name) in \(directory.deletingLastPathComponent().path)")
        }
        try FileManager.default.removeItem(at: directory)
        print("Removed kernelspec \(location.name) from \(directory.path)")
    }
}

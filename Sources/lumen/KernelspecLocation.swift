import ArgumentParser
import Foundation

/// Where a kernelspec is installed: the options `install` and `uninstall` share.
struct KernelspecLocation: ParsableArguments {
    @Flag(help: "Install for the current user (the default).")
    var user = false

    @Flag(help: "Install into the active virtual environment ($VIRTUAL_ENV or $CONDA_PREFIX).")
    var sysPrefix = false

    @Option(help: "Install under DIR/share/jupyter/kernels.")
    var prefix: String?

    @Option(help: "The kernelspec's name.")
    var name = "lumen"

    func validate() throws {
        guard [user, sysPrefix, prefix != nil].filter({ $0 }).count <= 1 else {
            throw ValidationError("choose at most one of --user, --sys-prefix and --prefix")
        }
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "._-".contains($0) }) else {
            throw ValidationError("a kernelspec name may hold only letters, digits, '.', '_' and '-'")
        }
    }

    /// The kernelspec directory these options name.
    func directory() throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base: URL
        if let prefix {
            base = URL(fileURLWithPath: prefix).appendingPathComponent("share/jupyter")
        } else if sysPrefix {
            guard let environmentPrefix = environment["VIRTUAL_ENV"] ?? environment["CONDA_PREFIX"] else {
                throw ValidationError("--sys-prefix needs an active virtual environment ($VIRTUAL_ENV or $CONDA_PREFIX is not set)")
            }
            base = URL(fileURLWithPath: environmentPrefix).appendingPathComponent("share/jupyter")
        } else if let dataDirectory = environment["JUPYTER_DATA_DIR"] {
            base = URL(fileURLWithPath: dataDirectory)
        } else if let xdgData = environment["XDG_DATA_HOME"], !xdgData.isEmpty {
            base = URL(fileURLWithPath: xdgData).appendingPathComponent("jupyter")
        } else {
            base = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share/jupyter")
        }
        return base.appendingPathComponent("kernels").appendingPathComponent(name)
    }
}

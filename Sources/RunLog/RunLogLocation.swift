import Foundation

/// Where the run log lives and whether it is on, from the environment: `LUMEN_LOG=0` turns it
/// off; `LUMEN_LOG_PATH` names the database; else `$XDG_DATA_HOME/lumen/runs.sqlite`
/// (`~/.local/share/lumen/runs.sqlite`).
public enum RunLogLocation {
    /// Whether the environment turns the log off.
    public static var isDisabled: Bool {
        ["0", "off", "false", "no"].contains(ProcessInfo.processInfo.environment["LUMEN_LOG"]?.lowercased() ?? "")
    }

    /// The database's path.
    public static var path: String {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["LUMEN_LOG_PATH"], !path.isEmpty { return path }
        let data = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? FileManager.default.homeDirectoryForCurrentUser.path + "/.local/share"
        return data + "/lumen/runs.sqlite"
    }
}

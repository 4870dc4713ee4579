import Foundation
import GGUF

/// Where model files are found by name, for cells (`load`) and commands alike.
public enum ModelLocator {
    /// Where bare model names are looked for: `LUMEN_MODEL_PATH` (colon-separated), `./models`,
    /// the user's data directory, then the model cache `make models` fills (`LUMEN_MODEL_CACHE`,
    /// else `~/.cache/lumen/models`).
    public static var searchPath: [String] {
        let environment = ProcessInfo.processInfo.environment
        let home = FileManager.default.homeDirectoryForCurrentUser.path
        let configured = environment["LUMEN_MODEL_PATH"].map { $0.split(separator: ":").map(String.init) } ?? []
        let data = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.local/share"
        let cache = environment["LUMEN_MODEL_CACHE"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.cache/lumen/models"
        return configured + ["models", data + "/lumen/models", cache]
    }

    /// The file a model name or path stands for: a path; a file name, with or without `.gguf`,
    /// in the search path; or the start of exactly one model file's name there, case
    /// insensitively (`smollm2` for `SmolLM2-135M-Instruct.Q4_1.gguf`).
    public static func resolve(_ name: String) throws(ModelError) -> String {
        let manager = FileManager.default
        if name.contains("/") || name.hasSuffix(".gguf"), manager.fileExists(atPath: name) { return name }
        for directory in searchPath {
            for candidate in [name, name + ".gguf"] where manager.fileExists(atPath: directory + "/" + candidate) {
                return directory + "/" + candidate
            }
        }
        for directory in searchPath {
            let files = ((try? manager.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".gguf") }
            let matches = files.filter { $0.lowercased().hasPrefix(name.lowercased()) }.sorted()
            if matches.count == 1 { return directory + "/" + matches[0] }
            if matches.count > 1 {
                throw ModelError(file: name, field: "path", reason: "names several models in \(directory): \(matches.joined(separator: ", "))")
            }
        }
        throw ModelError(file: name, field: "path", reason: "no such model file; looked in \(searchPath.joined(separator: ", ")) (set LUMEN_MODEL_PATH, or run make models for the real models)")
    }

    /// The model files in the search path, each file name once (the first directory that has it
    /// wins, as `resolve` finds it), sorted.
    public static func availableModels() -> [String] {
        Set(searchPath.flatMap { directory in
            ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".gguf") }
        }).sorted()
    }
}

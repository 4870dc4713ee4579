/// Why a JSON body could not be read, in a sentence naming the field: for a server's 400 and a
/// client's complaint about an answer alike.
public enum DecodingFailure {
    /// `error` in a sentence: which field, and what was wrong with it.
    public static func describe(_ error: any Error) -> String {
        guard let decoding = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch decoding {
        case .keyNotFound(let key, let context):
            return "missing field '\(key.stringValue)'" + (context.codingPath.isEmpty ? "" : " in '\(path(context))'")
        case .typeMismatch(let type, let context): return "field '\(path(context))' should be \(type == String.self ? "a string" : "\(type)")"
        case .valueNotFound(_, let context): return "field '\(path(context))' is null"
        case .dataCorrupted(let context): return context.codingPath.isEmpty ? "not valid JSON" : "field '\(path(context))': \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}

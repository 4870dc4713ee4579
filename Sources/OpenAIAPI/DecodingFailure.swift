import Foundation

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

    /// Why `data`, a JSON object, does not decode as `T`, naming the field: as `describe`, and
    /// where Foundation names none (a number that does not fit an integer field, such as 3.5 or
    /// 2^63), found by setting each top-level number that is not a 64-bit integer to 0 in turn.
    public static func describe<T: Decodable>(_ error: any Error, decoding type: T.Type, from data: Data) -> (message: String, field: String?) {
        guard case DecodingError.dataCorrupted(let context) = error, context.codingPath.isEmpty,
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return (describe(error), topField(of: error))
        }
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            guard let number = value as? NSNumber, !(number is Bool), Int64(exactly: number.doubleValue) == nil || "\(number)".contains(".") else { continue }
            var fixed = object
            fixed[key] = 0
            guard let changed = try? JSONSerialization.data(withJSONObject: fixed) else { continue }
            do {
                _ = try JSONDecoder().decode(T.self, from: changed)
            } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
                continue
            } catch {}
            let rule = number.doubleValue.rounded() == number.doubleValue ? "an integer of magnitude below 2^63" : "an integer"
            return ("field '\(key)' must be \(rule), got \(number)", key)
        }
        return (describe(error), nil)
    }

    /// The top-level field a decoding error is in, if it names one.
    private static func topField(of error: any Error) -> String? {
        let context: DecodingError.Context? = switch error as? DecodingError {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): context
        case .keyNotFound(let key, let context): context.codingPath.isEmpty ? DecodingError.Context(codingPath: [key], debugDescription: "") : context
        default: nil
        }
        return context?.codingPath.first?.stringValue
    }
}

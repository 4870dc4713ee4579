import Foundation

/// The JSON form of run records, one object per line in `lumen log export`: keys sorted, times
/// in UTC ISO 8601 to the millisecond (the precision the log keeps), so an export read back with
/// `decoder` gives the same records.
public enum RunRecordJSON {
    /// An encoder with sorted keys that writes a figure that is not a finite number as a string
    /// (JSON has no NaN or infinity).
    private static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }

    /// A decoder that reads what `makeEncoder` wrote.
    private static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return decoder
    }

    /// Encodes the nested values of one database column.
    static let columnEncoder = makeEncoder()

    /// Decodes what `columnEncoder` wrote.
    static let columnDecoder = makeDecoder()

    /// Encodes one record as one line.
    public static let encoder: JSONEncoder = {
        let encoder = makeEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
            let (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
            let whole = Date(timeIntervalSince1970: Double(fraction < 0 ? seconds - 1 : seconds)).formatted(.iso8601)
            var container = encoder.singleValueContainer()
            try container.encode(whole.dropLast() + String(format: ".%03dZ", (fraction + 1000) % 1000))
        }
        return encoder
    }()

    /// Decodes what `encoder` wrote.
    public static let decoder: JSONDecoder = {
        let decoder = makeDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = try? Date(text, strategy: Self.format) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 time: \(text)"))
            }
            return RunRecord.millisecond(date)
        }
        return decoder
    }()

    private static let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
}

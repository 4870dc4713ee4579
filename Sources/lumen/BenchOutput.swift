import ArgumentParser
import Foundation

/// How `lumen bench` prints its results, as llama-bench's `-o`: a Markdown table, CSV, one JSON
/// array, or one JSON object per line. Rows are printed as each test finishes, except JSON's
/// array, which comes at the end.
enum BenchOutput: String, ExpressibleByArgument, CaseIterable {
    case md, csv, json, jsonl

    /// The CSV columns, in order.
    static let csvColumns: [BenchResult.CodingKeys] = [
        .modelFilename, .modelType, .modelSize, .modelNParams, .nThreads, .nPrompt, .nGen, .nDepth, .test, .avgTs, .stddevTs,
    ]

    /// What precedes the rows.
    var header: String? {
        switch self {
        case .md: "| model | size | params | backend | threads | test | t/s |\n| --- | ---: | ---: | --- | ---: | ---: | ---: |"
        case .csv: Self.csvColumns.map(\.stringValue).joined(separator: ",")
        case .json, .jsonl: nil
        }
    }

    /// The line printed when `result` is measured (nil for JSON, printed whole at the end).
    func line(_ result: BenchResult) throws -> String? {
        switch self {
        case .md:
            let line = String(format: "| %@ (%@) | %@ | %@ | CPU | %d | %@ | %.2f ± %.2f |", result.modelFilename, result.modelType,
                              ModelInfo.bytes(result.modelSize), ModelInfo.count(result.modelNParams), result.nThreads, result.test,
                              result.avgTs, result.stddevTs)
            guard let gigabytes = result.bandwidthGBPerSecond, let bytes = result.bytesPerToken, let fraction = result.fractionOfBandwidthLimit else { return line }
            return line + String(format: " read %.1f GB/s, %@/token: best %.0f%% of the bandwidth limit", gigabytes, ModelInfo.bytes(bytes), 100 * fraction)
        case .csv:
            // The columns' values from the row's own JSON, so CSV and JSON cannot disagree.
            let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(result)) as? [String: Any] ?? [:]
            return Self.csvColumns.map { column in
                let field = object[column.stringValue].map { "\($0)" } ?? ""
                return field.contains(",") || field.contains("\"") ? "\"\(field.replacingOccurrences(of: "\"", with: "\"\""))\"" : field
            }.joined(separator: ",")
        case .jsonl:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return String(decoding: try encoder.encode(result), as: UTF8.self)
        case .json:
            return nil
        }
    }

    /// The whole JSON document for `results` (`-o json`).
    func document(_ results: [BenchResult]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(results), as: UTF8.self)
    }
}

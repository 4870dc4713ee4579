import Foundation
import GRDB

// How a run record is stored: a row of the log's `run` table (its nested values as JSON columns).
extension RunRecord: FetchableRecord, MutablePersistableRecord {
    /// The table the records live in.
    public static let databaseTableName = "run"
    /// Times are stored as seconds since 1970 (to the millisecond), so they read back exactly.
    public static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .timeIntervalSince1970
    }

    /// Reads what `databaseDateEncodingStrategy` writes.
    public static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        .timeIntervalSince1970
    }

    /// The JSON of nested columns (token arrays, figures): a NaN or infinite figure is kept as a
    /// string rather than failing the write.
    public static func databaseJSONEncoder(for column: String) -> JSONEncoder {
        RunRecordJSON.columnEncoder
    }

    /// Reads what `databaseJSONEncoder` writes.
    public static func databaseJSONDecoder(for column: String) -> JSONDecoder {
        RunRecordJSON.columnDecoder
    }

    /// Keeps the number the database gave the record.
    public mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}

import GRDB

/// The log's schema, versioned by GRDB's migrator: each migration runs once per database, in
/// order, so a newer Lumen upgrades an older log in place.
enum RunLogSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: runs and file digests") { db in
            try db.create(table: RunRecord.databaseTableName) { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("time", .double).notNull().indexed()
                table.column("kind", .text).notNull()
                table.column("entry", .text).notNull()
                // Nested values (origin, model, options, messages, token arrays) are JSON text.
                table.column("origin", .jsonText).notNull()
                table.column("model", .jsonText).notNull()
                table.column("baseModel", .jsonText)
                table.column("options", .jsonText)
                table.column("prompt", .text).notNull()
                table.column("messages", .jsonText)
                table.column("renderedPrompt", .text)
                table.column("output", .text).notNull()
                table.column("tokenIDs", .jsonText).notNull()
                table.column("logProbabilities", .jsonText).notNull()
                table.column("finishReason", .text).notNull()
                table.column("promptTokens", .integer).notNull()
                table.column("generatedTokens", .integer).notNull()
                table.column("promptTokensPerSecond", .double).notNull()
                table.column("tokensPerSecond", .double).notNull()
                table.column("timeToFirstToken", .double).notNull()
                table.column("interrupted", .boolean).notNull()
                table.column("value", .double)
                table.column("figures", .jsonText)
            }
            try db.create(table: FileDigest.databaseTableName) { table in
                table.primaryKey("path", .text)
                table.column("size", .integer).notNull()
                table.column("modified", .double).notNull()
                table.column("sha256", .text).notNull()
            }
        }
        return migrator
    }
}

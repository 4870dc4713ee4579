import ArgumentParser
import Executors
import Foundation
import GenerationTypes
import Grammars

/// llama.cpp's options that constrain the output, for `lumen generate` and `lumen chat`: a GBNF
/// grammar or a JSON Schema, as text or from a file. At most one is given; its mistakes are
/// reported with their line and column (or the schema's JSON pointer) before the model loads.
struct ConstraintArguments: ParsableArguments {
    @Option(help: "A llama.cpp GBNF grammar the output must follow (from its root rule).")
    var grammar: String?

    @Option(name: .customLong("grammar-file"), help: "Read the GBNF grammar from FILE.")
    var grammarFile: String?

    @Option(name: [.customShort("j"), .customLong("json-schema")], help: "A JSON Schema the output must be valid JSON against ('{}' for any JSON object).")
    var jsonSchema: String?

    @Option(name: [.customLong("jf", withSingleDash: true), .customLong("json-schema-file")], help: "Read the JSON Schema from FILE.")
    var jsonSchemaFile: String?

    func validate() throws {
        let given = [grammar, grammarFile, jsonSchema, jsonSchemaFile].compactMap { $0 }
        if given.count > 1 { throw ValidationError("give one of --grammar, --grammar-file, --json-schema and --json-schema-file") }
    }

    /// The constraint these options ask for, its grammar checked, read on a thread of its own
    /// (reading a file blocks).
    ///
    /// - Throws: `CommandError` naming the file that cannot be read, or what is wrong in the grammar
    ///   or schema and where.
    func readConstraint() async throws -> OutputConstraint? {
        let arguments = self
        return try await DedicatedThread.run(name: "lumen-constraint") { () throws -> OutputConstraint? in try arguments.constraint() }
    }

    /// The constraint the options give (nil for none), reading its file if one is named: blocks,
    /// so `readConstraint` calls it off the cooperative pool.
    private func constraint() throws -> OutputConstraint? {
        func read(_ path: String) throws -> String {
            do {
                return try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw CommandError("\(path): cannot be read as UTF-8 text")
            }
        }
        let constraint: OutputConstraint
        let origin: String
        if let grammar {
            (constraint, origin) = (.grammar(grammar), "--grammar")
        } else if let grammarFile {
            (constraint, origin) = (.grammar(try read(grammarFile)), grammarFile)
        } else if let jsonSchema {
            // llama.cpp reads an empty schema as any JSON object.
            (constraint, origin) = (jsonSchema.trimmingCharacters(in: .whitespaces) == "{}" ? .jsonObject : .jsonSchema(jsonSchema), "--json-schema")
        } else if let jsonSchemaFile {
            (constraint, origin) = (.jsonSchema(try read(jsonSchemaFile)), jsonSchemaFile)
        } else {
            return nil
        }
        do {
            try Grammar.check(constraint)
        } catch {
            throw CommandError("\(origin): \(error)")
        }
        return constraint
    }
}

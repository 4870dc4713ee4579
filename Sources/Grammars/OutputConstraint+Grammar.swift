import GenerationTypes

extension Grammar {
    /// The llama.cpp GBNF grammar `constraint` stands for: its own text for a grammar, the
    /// conversion of a JSON schema, regular expression or choice.
    ///
    /// - Throws: `GrammarError` naming what is wrong and where (a line and column, or a JSON
    ///   pointer into a schema).
    public static func gbnf(for constraint: OutputConstraint) throws(GrammarError) -> String {
        switch constraint {
        case .grammar(let text):
            return text
        case .jsonObject:
            return JSONSchemaGrammar.anyObject
        case .jsonSchema(let schema):
            return try JSONSchemaGrammar.gbnf(schema: schema)
        case .regex(let pattern):
            var regex = RegexGrammar(pattern)
            let body = try regex.expression().gbnf
            return "root ::= \(body.isEmpty ? "\"\"" : body)\n"
        case .choice(let options):
            guard !options.isEmpty else { throw GrammarError("choice", at: .whole, "needs at least one string to choose from") }
            return "root ::= " + options.map(GBNFText.literal).joined(separator: " | ") + "\n"
        }
    }

    /// How a value valid against a JSON Schema is written.
    public enum ValueSyntax: Sendable, Equatable {
        /// As JSON.
        case json
        /// As Gemma 4 writes a tool call's arguments: strings between `<|"|>` marks, keys bare
        /// (`{city:<|"|>Paris<|"|>,days:3}`).
        case gemma4
        /// As Qwen 3.5 writes a tool call's arguments: each a `<parameter=KEY>` block, its value
        /// on the lines after — bare text for a string, JSON for any other — then `</parameter>`.
        case xmlParameters
    }

    /// The llama.cpp GBNF grammar of one or more tool calls (`separator` between them; exactly
    /// one when nil), each one of `calls`: its prefix (the call's start and name), its arguments
    /// valid against its schema (JSON text) and written in `syntax`, then its suffix.
    ///
    /// - Throws: `GrammarError` naming what is wrong in a schema and where.
    public static func gbnf(toolCalls calls: [(prefix: String, schema: String, suffix: String)], separator: String?,
                            syntax: ValueSyntax = .json) throws(GrammarError) -> String {
        try JSONSchemaGrammar.gbnf(alternatives: calls, separator: separator, syntax: syntax)
    }

    /// The grammar of `constraint`; `tokenNamed` finds the token a GBNF `<text>` element names;
    /// `limits` bound its size; `isCancelled` is asked as it is read, and a yes ends the
    /// compilation with `GrammarError.cancelled`.
    ///
    /// - Throws: `GrammarError` naming what is wrong (or the limit crossed) and where.
    public init(_ constraint: OutputConstraint, tokenNamed: ((String) -> Int32?)? = nil, limits: GrammarLimits = .standard,
                isCancelled: @escaping () -> Bool = { false }) throws(GrammarError) {
        let text = try Self.gbnf(for: constraint)
        var parser = GBNFParser(text, source: Self.source(of: constraint),
                                tokenNamed: tokenNamed, limits: limits, isCancelled: isCancelled)
        self = try parser.parse()
    }

    /// What errors about the grammar of `constraint` call it: "grammar", or "grammar made from json".
    public static func source(of constraint: OutputConstraint) -> String {
        constraint.optionName == "grammar" ? "grammar" : "grammar made from \(constraint.optionName)"
    }

    /// Checks that `constraint` makes a grammar, before a model is at hand: tokens a grammar names
    /// by their text (`<think>`) are checked against the vocabulary when a generation starts.
    ///
    /// - Throws: `GrammarError` naming what is wrong and where.
    public static func check(_ constraint: OutputConstraint) throws(GrammarError) {
        _ = try Grammar(constraint) { _ in 0 }
    }
}

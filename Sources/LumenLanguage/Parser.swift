/// Parses Lumen tokens into statements.
public struct Parser {
    private let tokens: [Token]
    private var position = 0

    /// Prepares to parse `tokens` (which end with `.end`).
    public init(tokens: [Token]) {
        self.tokens = tokens
    }

    /// Lexes and parses a whole cell.
    public static func parse(_ source: String) throws(LumenError) -> [Statement] {
        var parser = Parser(tokens: try Lexer.tokenize(source))
        return try parser.parseProgram()
    }

    private var current: Token { tokens[min(position, tokens.count - 1)] }

    private mutating func advance() -> Token {
        let token = current
        if position < tokens.count - 1 { position += 1 }
        return token
    }

    private func isSymbol(_ text: String) -> Bool {
        current.kind == .symbol(text)
    }

    private mutating func expectSymbol(_ text: String, _ context: String) throws(LumenError) {
        guard isSymbol(text) else { throw unexpected(expecting: "'\(text)' \(context)") }
        _ = advance()
    }

    /// An error for the current token, marking the end of input as something more input can fix.
    private func unexpected(expecting expected: String) -> LumenError {
        LumenError(.syntax, "expected \(expected), found \(Self.describe(current.kind))",
                   at: current.location, needsMoreInput: current.kind == .end)
    }

    static func describe(_ kind: Token.Kind) -> String {
        switch kind {
        case .identifier(let name): "'\(name)'"
        case .keyword(let word): "'\(word)'"
        case .integer(let value): "\(value)"
        case .float(let value): "\(value)"
        case .string: "a string"
        case .symbol(let text): "'\(text)'"
        case .newline: "end of line"
        case .end: "end of input"
        }
    }

    /// Parses statements up to the end of input.
    public mutating func parseProgram() throws(LumenError) -> [Statement] {
        var statements: [Statement] = []
        while true {
            while current.kind == .newline || isSymbol(";") { _ = advance() }
            if current.kind == .end { return statements }
            statements.append(.expression(try parseExpression()))
            guard current.kind == .newline || current.kind == .end || isSymbol(";") else {
                throw unexpected(expecting: "end of statement")
            }
        }
    }

    private mutating func parseExpression() throws(LumenError) -> Expression {
        if isSymbol("-") {
            let location = advance().location
            return .negate(try parseExpression(), location)
        }
        var expression = try parsePrimary()
        while isSymbol("(") {
            let location = advance().location
            expression = .call(callee: expression, arguments: try parseArguments(), location)
        }
        return expression
    }

    private mutating func parseArguments() throws(LumenError) -> [Argument] {
        var arguments: [Argument] = []
        while !isSymbol(")") {
            var label: String?
            if case .identifier(let name) = current.kind, tokens[min(position + 1, tokens.count - 1)].kind == .symbol(":") {
                label = name
                _ = advance()
                _ = advance()
            }
            arguments.append(Argument(label: label, value: try parseExpression()))
            guard isSymbol(",") else { break }
            _ = advance()
        }
        try expectSymbol(")", "to close the argument list")
        return arguments
    }

    private mutating func parsePrimary() throws(LumenError) -> Expression {
        let token = current
        switch token.kind {
        case .integer(let value):
            _ = advance()
            return .literal(.integer(value), token.location)
        case .float(let value):
            _ = advance()
            return .literal(.double(value), token.location)
        case .string(let text):
            _ = advance()
            return .literal(.string(text), token.location)
        case .keyword("true"), .keyword("false"):
            _ = advance()
            return .literal(.bool(token.kind == .keyword("true")), token.location)
        case .keyword("nil"):
            _ = advance()
            return .literal(.null, token.location)
        case .identifier(let name):
            _ = advance()
            return .identifier(name, token.location)
        case .symbol("("):
            _ = advance()
            let inner = try parseExpression()
            try expectSymbol(")", "to close the parenthesis")
            return inner
        default:
            throw unexpected(expecting: "an expression")
        }
    }
}

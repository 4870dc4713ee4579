/// Parses Lumen tokens into statements, with Swift's operator precedence.
public struct Parser {
    private let tokens: [Token]
    private var position = 0
    /// Whether `expression {` may be a call with a trailing closure (not in `if`/`while`/`for` heads).
    private var allowsTrailingClosure = true
    /// How deeply expressions and blocks nest here; bounded so no input can exhaust the stack.
    private var depth = 0
    private static let maximumDepth = 200

    /// Prepares to parse `tokens` (which end with `.end`).
    public init(tokens: [Token]) {
        self.tokens = tokens
    }

    /// Lexes and parses a whole cell.
    public static func parse(_ source: String) throws(LumenError) -> [Statement] {
        var parser = Parser(tokens: try Lexer.tokenize(source))
        return try parser.parseProgram()
    }

    // MARK: - Tokens

    private var current: Token { tokens[min(position, tokens.count - 1)] }
    private var next: Token { tokens[min(position + 1, tokens.count - 1)] }

    @discardableResult
    private mutating func advance() -> Token {
        let token = current
        if position < tokens.count - 1 { position += 1 }
        return token
    }

    private func isSymbol(_ text: String) -> Bool { current.kind == .symbol(text) }
    private func isKeyword(_ word: String) -> Bool { current.kind == .keyword(word) }

    private mutating func skipNewlines() {
        while current.kind == .newline { advance() }
    }

    private mutating func expectSymbol(_ text: String, _ context: String) throws(LumenError) {
        guard isSymbol(text) else { throw unexpected(expecting: "'\(text)' \(context)") }
        advance()
    }

    private mutating func expectIdentifier(_ context: String) throws(LumenError) -> String {
        guard case .identifier(let name) = current.kind else { throw unexpected(expecting: "a name \(context)") }
        advance()
        return name
    }

    /// An error for the current token; at the end of input, more input could fix it.
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
        case .string, .interpolatedString: "a string"
        case .symbol(let text): "'\(text)'"
        case .newline: "end of line"
        case .end: "end of input"
        }
    }

    // MARK: - Statements

    /// Parses statements up to the end of input.
    public mutating func parseProgram() throws(LumenError) -> [Statement] {
        let statements = try parseStatements(until: nil)
        guard current.kind == .end else { throw unexpected(expecting: "a statement") }
        return statements
    }

    private mutating func parseStatements(until closing: String?) throws(LumenError) -> [Statement] {
        var statements: [Statement] = []
        while true {
            while current.kind == .newline || isSymbol(";") { advance() }
            if current.kind == .end || closing.map(isSymbol) == true { return statements }
            statements.append(try parseStatement())
            guard current.kind == .newline || current.kind == .end || isSymbol(";") || closing.map(isSymbol) == true else {
                throw unexpected(expecting: "end of statement")
            }
        }
    }

    private mutating func parseBlock(_ context: String) throws(LumenError) -> [Statement] {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else {
            throw LumenError(.syntax, "blocks nest more than \(Self.maximumDepth) deep", at: current.location)
        }
        try expectSymbol("{", "to open \(context)")
        let saved = allowsTrailingClosure
        allowsTrailingClosure = true
        defer { allowsTrailingClosure = saved }
        let body = try parseStatements(until: "}")
        try expectSymbol("}", "to close \(context)")
        return body
    }

    private mutating func parseStatement() throws(LumenError) -> Statement {
        let start = current.location
        switch current.kind {
        case .keyword("let"), .keyword("var"):
            let constant = isKeyword("let")
            advance()
            let name = try expectIdentifier("to declare")
            guard isSymbol("=") else {
                if constant { throw unexpected(expecting: "'=' and a value for the constant '\(name)'") }
                return .declaration(name: name, constant: false, value: nil, start)
            }
            advance()
            skipNewlines()
            return .declaration(name: name, constant: constant, value: try parseExpression(), start)
        case .keyword("if"):
            return try parseConditional()
        case .keyword("for"):
            advance()
            var names: [String] = []
            if isSymbol("(") {
                advance()
                repeat {
                    if isSymbol(",") { advance() }
                    names.append(try expectIdentifier("in the loop pattern"))
                } while isSymbol(",")
                try expectSymbol(")", "to close the loop pattern")
            } else {
                names = [try expectIdentifier("for the loop variable")]
            }
            guard isKeyword("in") else { throw unexpected(expecting: "'in'") }
            advance()
            let sequence = try parseHead()
            return .forIn(names: names, sequence: sequence, body: try parseBlock("the loop body"), start)
        case .keyword("while"):
            advance()
            let condition = try parseHead()
            return .whileLoop(condition: condition, body: try parseBlock("the loop body"))
        case .keyword("break"):
            advance()
            return .breakLoop(start)
        case .keyword("continue"):
            advance()
            return .continueLoop(start)
        case .keyword("return"):
            advance()
            let endsHere = current.kind == .newline || current.kind == .end || isSymbol(";") || isSymbol("}")
            return .returnValue(endsHere ? nil : try parseExpression(), start)
        case .keyword("func"):
            advance()
            let name = try expectIdentifier("for the function")
            let parameters = try parseParameters()
            return .function(name: name, Closure(parameters: parameters, body: try parseBlock("the function body")), start)
        default:
            let expression = try parseExpression()
            for assignment in ["=", "+=", "-=", "*=", "/="] where isSymbol(assignment) {
                let location = advance().location
                guard Self.isAssignable(expression) else {
                    throw LumenError(.syntax, "cannot assign to this expression", at: expression.location)
                }
                skipNewlines()
                let value = try parseExpression()
                return .assignment(target: expression, operator: assignment == "=" ? nil : String(assignment.dropLast()), value: value, location)
            }
            return .expression(expression)
        }
    }

    private static func isAssignable(_ expression: Expression) -> Bool {
        switch expression {
        case .identifier: true
        case .subscripted(let base, _, _): isAssignable(base)
        // A host object's settable property (`slider.value = 3`), checked when it runs.
        case .member: true
        default: false
        }
    }

    /// An `if`/`while`/`for` head: an expression that cannot take a trailing closure.
    private mutating func parseHead() throws(LumenError) -> Expression {
        let saved = allowsTrailingClosure
        allowsTrailingClosure = false
        defer { allowsTrailingClosure = saved }
        return try parseExpression()
    }

    private mutating func parseConditional() throws(LumenError) -> Statement {
        var branches: [(condition: Expression, body: [Statement])] = []
        var otherwise: [Statement]?
        repeat {
            advance()
            let condition = try parseHead()
            branches.append((condition, try parseBlock("the 'if' body")))
            guard isKeyword("else") else { break }
            advance()
            if !isKeyword("if") {
                otherwise = try parseBlock("the 'else' body")
                break
            }
        } while true
        return .conditional(branches: branches, otherwise: otherwise)
    }

    /// `(a, label: b, c = 1, label: d = 2)`.
    private mutating func parseParameters() throws(LumenError) -> [Parameter] {
        try expectSymbol("(", "to open the parameter list")
        var parameters: [Parameter] = []
        while !isSymbol(")") {
            var label: String?
            var name = try expectIdentifier("for a parameter")
            if isSymbol(":") {
                advance()
                label = name
                name = try expectIdentifier("for the parameter labelled '\(name)'")
            }
            var defaultValue: Expression?
            if isSymbol("=") {
                advance()
                defaultValue = try parseExpression()
            }
            guard !parameters.contains(where: { $0.name == name }) else {
                throw LumenError(.syntax, "the parameter '\(name)' is declared twice", at: current.location)
            }
            parameters.append(Parameter(label: label == "_" ? nil : label, name: name, defaultValue: defaultValue))
            guard isSymbol(",") else { break }
            advance()
        }
        try expectSymbol(")", "to close the parameter list")
        return parameters
    }

    // MARK: - Expressions

    /// Binary operators by precedence, loosest first.
    private static let precedence: [(operators: Set<String>, rightAssociative: Bool)] = [
        (["||"], false), (["&&"], false), (["==", "!=", "<", "<=", ">", ">="], false),
        (["??"], true), (["..<", "..."], false), (["+", "-"], false), (["*", "/", "%"], false),
    ]

    /// The most indices one subscript takes (`t[0, 1, …]`), one per axis.
    static let maximumIndices = 64

    /// The precedence level of `..<` and `...`.
    private static let rangeLevel = precedence.firstIndex { $0.operators.contains("..<") }!

    private mutating func parseExpression() throws(LumenError) -> Expression {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else {
            throw LumenError(.syntax, "expressions nest more than \(Self.maximumDepth) deep", at: current.location)
        }
        let condition = try parseBinary(level: 0)
        guard isSymbol("?") else { return condition }
        let location = advance().location
        skipNewlines()
        let whenTrue = try parseExpression()
        skipNewlines()
        try expectSymbol(":", "in the conditional expression")
        skipNewlines()
        return .ternary(condition, whenTrue, try parseExpression(), location)
    }

    private mutating func parseBinary(level: Int) throws(LumenError) -> Expression {
        guard level < Self.precedence.count else { return try parseUnary() }
        var left = try parseBinary(level: level + 1)
        let (operators, rightAssociative) = Self.precedence[level]
        while case .symbol(let symbol) = current.kind, operators.contains(symbol) {
            let location = advance().location
            // `2...` before the end of a subscript item: a range up to the axis's end.
            if symbol == "...", isSymbol("]") || isSymbol(",") {
                return .binary(symbol, left, .literal(.null, location), location)
            }
            skipNewlines()
            let right = rightAssociative ? try parseBinary(level: level) : try parseBinary(level: level + 1)
            left = .binary(symbol, left, right, location)
            if rightAssociative { break }
        }
        return left
    }

    private mutating func parseUnary() throws(LumenError) -> Expression {
        // `..<3` and `...3`: a range from the axis's start; `...` alone: the whole axis.
        if isSymbol("...") || isSymbol("..<") {
            let token = advance()
            guard case .symbol(let symbol) = token.kind else { return try parsePostfix() }
            if symbol == "...", isSymbol("]") || isSymbol(",") {
                return .binary(symbol, .literal(.null, token.location), .literal(.null, token.location), token.location)
            }
            return .binary(symbol, .literal(.null, token.location), try parseBinary(level: Self.rangeLevel + 1), token.location)
        }
        if isSymbol("-") || isSymbol("!") {
            depth += 1
            defer { depth -= 1 }
            guard depth <= Self.maximumDepth else {
                throw LumenError(.syntax, "expressions nest more than \(Self.maximumDepth) deep", at: current.location)
            }
            let token = advance()
            guard case .symbol(let symbol) = token.kind else { return try parsePostfix() }
            return .unary(symbol, try parseUnary(), token.location)
        }
        return try parsePostfix()
    }

    private mutating func parsePostfix() throws(LumenError) -> Expression {
        var expression = try parsePrimary()
        while true {
            if isSymbol("(") {
                let location = advance().location
                var arguments = try parseArguments(closing: ")")
                if allowsTrailingClosure && isSymbol("{") { arguments.append(Argument(label: nil, value: try parseClosure())) }
                expression = .call(callee: expression, arguments: arguments, location)
            } else if isSymbol("{") && allowsTrailingClosure && Self.canTakeTrailingClosure(expression) {
                let location = current.location
                expression = .call(callee: expression, arguments: [Argument(label: nil, value: try parseClosure())], location)
            } else if isSymbol(".") {
                advance()
                let location = current.location
                expression = .member(expression, try expectIdentifier("after '.'"), location)
            } else if isSymbol("[") {
                let location = advance().location
                var items = [try parseExpression()]
                while isSymbol(",") {
                    // One index per axis: an array's subscript recurses once per index.
                    guard items.count < Self.maximumIndices else {
                        throw LumenError(.syntax, "a subscript takes at most \(Self.maximumIndices) indices", at: current.location)
                    }
                    advance()
                    items.append(try parseExpression())
                }
                try expectSymbol("]", "to close the subscript")
                expression = .subscripted(expression, items.count == 1 ? items[0] : .indices(items, location), location)
            } else {
                return expression
            }
        }
    }

    private static func canTakeTrailingClosure(_ expression: Expression) -> Bool {
        switch expression {
        case .identifier, .member: true
        default: false
        }
    }

    private mutating func parseArguments(closing: String) throws(LumenError) -> [Argument] {
        var arguments: [Argument] = []
        while !isSymbol(closing) {
            var label: String?
            // As in Swift, keywords may be labels too (`random(in: 1...6)`).
            if next.kind == .symbol(":") {
                switch current.kind {
                case .identifier(let name), .keyword(let name):
                    label = name
                    advance()
                    advance()
                default:
                    break
                }
            }
            arguments.append(Argument(label: label, value: try parseExpression()))
            guard isSymbol(",") else { break }
            advance()
        }
        try expectSymbol(closing, "to close the argument list")
        return arguments
    }

    private mutating func parseClosure() throws(LumenError) -> Expression {
        let location = current.location
        try expectSymbol("{", "to open the closure")
        var parameters: [Parameter] = []
        // `{ a, b in` or `{ (a, b) in` declares parameters; look ahead for `in`.
        var lookahead = position
        var names: [String] = []
        if tokens[lookahead].kind == .symbol("(") { lookahead += 1 }
        while case .identifier(let name) = tokens[lookahead].kind {
            names.append(name)
            lookahead += 1
            if tokens[lookahead].kind == .symbol(")") { lookahead += 1 }
            guard tokens[lookahead].kind == .symbol(",") else { break }
            lookahead += 1
        }
        if !names.isEmpty, tokens[lookahead].kind == .keyword("in") {
            parameters = names.map { Parameter(label: nil, name: $0, defaultValue: nil) }
            position = lookahead + 1
        }
        let saved = allowsTrailingClosure
        allowsTrailingClosure = true
        defer { allowsTrailingClosure = saved }
        let body = try parseStatements(until: "}")
        try expectSymbol("}", "to close the closure")
        return .closure(Closure(parameters: parameters, body: body), location)
    }

    private mutating func parsePrimary() throws(LumenError) -> Expression {
        let token = current
        switch token.kind {
        case .integer(let value):
            advance()
            return .literal(.integer(value), token.location)
        case .float(let value):
            advance()
            return .literal(.double(value), token.location)
        case .string(let text):
            advance()
            return .literal(.string(text), token.location)
        case .interpolatedString(let segments):
            advance()
            var parts: [InterpolationPart] = []
            for segment in segments {
                switch segment {
                case .text(let text): parts.append(.text(text))
                case .code(let code, let start):
                    var inner = Parser(tokens: try Lexer.tokenize(code, start: start))
                    inner.depth = depth + 1
                    let expression = try inner.parseExpression()
                    guard inner.current.kind == .end else { throw inner.unexpected(expecting: "')' to end the interpolation") }
                    parts.append(.expression(expression))
                }
            }
            return .interpolation(parts, token.location)
        case .keyword("true"), .keyword("false"):
            advance()
            return .literal(.bool(token.kind == .keyword("true")), token.location)
        case .keyword("nil"):
            advance()
            return .literal(.null, token.location)
        case .identifier(let name):
            advance()
            return .identifier(name, token.location)
        case .symbol("$"):
            advance()
            guard case .integer(let index) = current.kind else { throw unexpected(expecting: "a number after '$'") }
            advance()
            return .shorthandArgument(index, token.location)
        case .symbol("("):
            advance()
            let inner = try parseExpression()
            try expectSymbol(")", "to close the parenthesis")
            return inner
        case .symbol("["):
            return try parseCollection()
        case .symbol("."):
            // An implicit member, as in `priority: .background`, stands for its name.
            advance()
            guard case .identifier(let name) = current.kind else { throw unexpected(expecting: "a name after '.'") }
            advance()
            return .literal(.string(name), token.location)
        case .symbol("{"):
            return try parseClosure()
        default:
            throw unexpected(expecting: "an expression")
        }
    }

    /// `[a, b]`, `[k: v, …]` or `[:]`.
    private mutating func parseCollection() throws(LumenError) -> Expression {
        let location = advance().location
        if isSymbol(":") {
            advance()
            try expectSymbol("]", "to close the empty dictionary")
            return .dictionary([], location)
        }
        var elements: [Expression] = []
        var pairs: [(key: Expression, value: Expression)] = []
        while !isSymbol("]") {
            let first = try parseExpression()
            if isSymbol(":") {
                guard elements.isEmpty else { throw unexpected(expecting: "',' between array elements") }
                advance()
                pairs.append((first, try parseExpression()))
            } else {
                guard pairs.isEmpty else { throw unexpected(expecting: "':' and a value in the dictionary") }
                elements.append(first)
            }
            guard isSymbol(",") else { break }
            advance()
        }
        try expectSymbol("]", "to close the collection")
        return pairs.isEmpty ? .array(elements, location) : .dictionary(pairs, location)
    }
}

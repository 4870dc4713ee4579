/// Parses a template's pieces into nodes, with jinja2's grammar and its messages for unknown or
/// misplaced tags.
struct TemplateParser {
    private let pieces: [TemplateLexer.Piece]
    private var index = 0
    /// The end tags each open block waits for, innermost last (for jinja2's messages).
    private var endTagStack: [[String]] = []
    private var tagStack: [String] = []

    init(pieces: [TemplateLexer.Piece]) {
        self.pieces = pieces
    }

    /// The whole template.
    mutating func parseTemplate() throws(TemplateError) -> [Node] {
        let (nodes, end) = try parseBody(until: [])
        if let end { throw .syntax("Encountered unknown tag '\(end.name)'.", at: end.position) }
        return nodes
    }

    /// Nodes up to one of `endTags` (returned with the tag's remaining tokens), or to the end of
    /// the template when `endTags` is empty.
    private mutating func parseBody(until endTags: [String]) throws(TemplateError) -> ([Node], (name: String, tokens: TokenStream, position: SourcePosition)?) {
        var nodes: [Node] = []
        while index < pieces.count {
            let piece = pieces[index]
            index += 1
            switch piece {
            case .text(let text):
                nodes.append(.text(text))
            case .output(let tokens, let position):
                var stream = TokenStream(tokens, end: position)
                let expression = try stream.parseExpression()
                try stream.expectEnd()
                nodes.append(.output(expression))
            case .statement(let tokens, let position):
                var stream = TokenStream(tokens, end: position)
                guard case .name(let tag) = stream.peek else { throw .syntax("tag name expected", at: position) }
                if endTags.contains(tag) {
                    stream.advance()
                    return (nodes, (tag, stream, position))
                }
                stream.advance()
                nodes.append(try parseStatement(tag, &stream, at: position))
            }
        }
        if !endTags.isEmpty { throw unknownTag(nil, at: pieces.last.map(Self.position) ?? SourcePosition(line: 1, column: 1)) }
        return (nodes, nil)
    }

    private static func position(of piece: TemplateLexer.Piece) -> SourcePosition {
        switch piece {
        case .text: SourcePosition(line: 1, column: 1)
        case .output(_, let position), .statement(_, let position): position
        }
    }

    private func unknownTag(_ name: String?, at position: SourcePosition) -> TemplateError {
        var message = name.map { "Encountered unknown tag '\($0)'." } ?? "Unexpected end of template."
        if let looking = endTagStack.last {
            let list = looking.map { "'\($0)'" }.joined(separator: " or ")
            if let name, endTagStack.joined().contains(name) {
                message += " You probably made a nesting mistake. Jinja is expecting this tag, but currently looking for \(list)."
            } else {
                message += " Jinja was looking for the following tags: \(list)."
            }
        }
        if let innermost = tagStack.last { message += " The innermost block that needs to be closed is '\(innermost)'." }
        return .syntax(message, at: position)
    }

    /// A body inside a block tag, with the block on the stacks for error messages.
    private mutating func parseBlock(_ tag: String, until endTags: [String]) throws(TemplateError) -> ([Node], (name: String, tokens: TokenStream, position: SourcePosition)) {
        guard tagStack.count < 200 else {
            throw .syntax("blocks are nested more than 200 deep", at: pieces.indices.contains(index - 1) ? Self.position(of: pieces[index - 1]) : SourcePosition(line: 1, column: 1))
        }
        endTagStack.append(endTags)
        tagStack.append(tag)
        defer {
            endTagStack.removeLast()
            tagStack.removeLast()
        }
        let (nodes, end) = try parseBody(until: endTags)
        guard let end else { throw unknownTag(nil, at: SourcePosition(line: 1, column: 1)) }
        return (nodes, end)
    }

    private mutating func parseStatement(_ tag: String, _ stream: inout TokenStream, at position: SourcePosition) throws(TemplateError) -> Node {
        switch tag {
        case "if":
            var branches: [(condition: Expression, body: [Node])] = []
            var condition = try stream.parseExpression(allowsConditional: false)
            try stream.expectEnd()
            while true {
                let (body, end) = try parseBlock("if", until: ["elif", "else", "endif"])
                branches.append((condition, body))
                var endStream = end.tokens
                switch end.name {
                case "elif":
                    condition = try endStream.parseExpression(allowsConditional: false)
                    try endStream.expectEnd()
                case "else":
                    try endStream.expectEnd()
                    let (otherwise, _) = try parseBlock("if", until: ["endif"])
                    return .conditional(branches: branches, otherwise: otherwise)
                default:
                    return .conditional(branches: branches, otherwise: [])
                }
            }
        case "for":
            var targets = [try stream.expectName()]
            while stream.skip(.symbol(",")) { targets.append(try stream.expectName()) }
            try stream.expect(.name("in"))
            let iterable = try stream.parseExpression(allowsConditional: false)
            var filter: Expression?
            if stream.skip(.name("if")) { filter = try stream.parseExpression(allowsConditional: false) }
            _ = stream.skip(.name("recursive"))
            try stream.expectEnd()
            let (body, end) = try parseBlock("for", until: ["endfor", "else"])
            var otherwise: [Node] = []
            if end.name == "else" {
                (otherwise, _) = try parseBlock("for", until: ["endfor"])
            }
            return .loop(targets: targets, iterable: iterable, filter: filter, body: body, otherwise: otherwise, position)
        case "set":
            let first = try stream.expectName()
            if stream.skip(.symbol(".")) {
                let attribute = try stream.expectName()
                try stream.expect(.symbol("="))
                let value = try stream.parseExpression()
                try stream.expectEnd()
                return .assign(.attribute(first, attribute), value, position)
            }
            var names = [first]
            while stream.skip(.symbol(",")) { names.append(try stream.expectName()) }
            if stream.skip(.symbol("=")) {
                let value = try stream.parseExpression()
                try stream.expectEnd()
                return .assign(.names(names), value, position)
            }
            let filters = try stream.parseFilterChain()
            try stream.expectEnd()
            let (body, _) = try parseBlock("set", until: ["endset"])
            return .assignBlock(first, filters: filters, body: body)
        case "macro":
            let name = try stream.expectName()
            let parameters = try stream.parseParameters()
            try stream.expectEnd()
            let (body, _) = try parseBlock("macro", until: ["endmacro"])
            return .macro(name, parameters, body: body)
        case "call":
            var parameters: [Parameter] = []
            if stream.peek == .symbol("(") { parameters = try stream.parseParameters() }
            let call = try stream.parseExpression()
            try stream.expectEnd()
            let (body, _) = try parseBlock("call", until: ["endcall"])
            return .callBlock(call, parameters, body: body, position)
        case "filter":
            let filters = try stream.parseFilterChain(leadingPipe: false)
            try stream.expectEnd()
            let (body, _) = try parseBlock("filter", until: ["endfilter"])
            return .filterBlock(filters, body: body)
        case "break":
            try stream.expectEnd()
            return .breakLoop
        case "continue":
            try stream.expectEnd()
            return .continueLoop
        default:
            throw unknownTag(tag, at: position)
        }
    }
}

/// The tokens of one tag, read by the expression grammar (jinja2's precedence: conditional
/// expressions, `or`, `and`, `not`, comparisons and `in`, `+ -`, `~`, `* / // %`, `**`, unary
/// minus, then postfix access, filters and tests).
struct TokenStream {
    private let tokens: [PositionedToken]
    private var index = 0
    private let endPosition: SourcePosition
    /// How deeply the expression being parsed nests, bounded so input cannot overflow the stack.
    private var depth = 0

    init(_ tokens: [PositionedToken], end: SourcePosition) {
        self.tokens = tokens
        endPosition = end
    }

    var peek: ExpressionToken? { index < tokens.count ? tokens[index].token : nil }
    private var position: SourcePosition { index < tokens.count ? tokens[index].position : endPosition }

    mutating func advance() { index += 1 }

    mutating func skip(_ token: ExpressionToken) -> Bool {
        guard peek == token else { return false }
        index += 1
        return true
    }

    mutating func expect(_ token: ExpressionToken) throws(TemplateError) {
        guard skip(token) else { throw unexpected(expected: Self.describe(token)) }
    }

    mutating func expectName() throws(TemplateError) -> String {
        guard case .name(let name)? = peek else { throw unexpected(expected: "name") }
        index += 1
        return name
    }

    func expectEnd() throws(TemplateError) {
        guard index >= tokens.count else { throw unexpected(expected: "end of statement block") }
    }

    private static func describe(_ token: ExpressionToken?) -> String {
        switch token {
        case .name(let name)?: name
        case .string(let text)?: "'\(text)'"
        case .integer(let value)?: String(value)
        case .float(let value)?: String(value)
        case .symbol(let symbol)?: symbol
        case nil: "end of statement block"
        }
    }

    private func unexpected(expected: String) -> TemplateError {
        .syntax("expected token '\(expected)', got '\(Self.describe(peek))'", at: position)
    }

    /// `(a, b=default, …)` of a macro or call block.
    mutating func parseParameters() throws(TemplateError) -> [Parameter] {
        try expect(.symbol("("))
        var parameters: [Parameter] = []
        while !skip(.symbol(")")) {
            if !parameters.isEmpty { try expect(.symbol(",")) }
            if skip(.symbol(")")) { break }
            let name = try expectName()
            let value = skip(.symbol("=")) ? try parseExpression() : nil
            parameters.append(Parameter(name: name, defaultValue: value))
        }
        return parameters
    }

    /// `| name(args) | name …` after a block set, or the filters of a filter block.
    mutating func parseFilterChain(leadingPipe: Bool = true) throws(TemplateError) -> [(name: String, arguments: Arguments, position: SourcePosition)] {
        var filters: [(name: String, arguments: Arguments, position: SourcePosition)] = []
        var first = true
        while (first && !leadingPipe) || skip(.symbol("|")) {
            first = false
            let at = position
            let name = try parseDottedName()
            let arguments = peek == .symbol("(") ? try parseArguments() : Arguments()
            filters.append((name, arguments, at))
        }
        return filters
    }

    private mutating func parseDottedName() throws(TemplateError) -> String {
        var name = try expectName()
        while skip(.symbol(".")) { name += "." + (try expectName()) }
        return name
    }

    mutating func parseExpression(allowsConditional: Bool = true) throws(TemplateError) -> Expression {
        let expression = try parseOr()
        guard allowsConditional, skip(.name("if")) else { return expression }
        let condition = try parseOr()
        let otherwise = skip(.name("else")) ? try parseExpression() : nil
        return .conditional(then: expression, condition: condition, otherwise: otherwise)
    }

    private mutating func parseOr() throws(TemplateError) -> Expression {
        var left = try parseAnd()
        while skip(.name("or")) { left = .or(left, try parseAnd()) }
        return left
    }

    private mutating func parseAnd() throws(TemplateError) -> Expression {
        var left = try parseNot()
        while skip(.name("and")) { left = .and(left, try parseNot()) }
        return left
    }

    private mutating func parseNot() throws(TemplateError) -> Expression {
        if skip(.name("not")) { return .not(try parseNot()) }
        return try parseCompare()
    }

    private mutating func parseCompare() throws(TemplateError) -> Expression {
        let at = position
        let left = try parseMath1()
        var operations: [(symbol: String, operand: Expression)] = []
        while true {
            if case .symbol(let symbol)? = peek, ["==", "!=", "<", "<=", ">", ">="].contains(symbol) {
                advance()
                operations.append((symbol, try parseMath1()))
            } else if skip(.name("in")) {
                operations.append(("in", try parseMath1()))
            } else if peek == .name("not"), index + 1 < tokens.count, tokens[index + 1].token == .name("in") {
                index += 2
                operations.append(("not in", try parseMath1()))
            } else {
                break
            }
        }
        return operations.isEmpty ? left : .compare(left, operations, at)
    }

    private mutating func parseBinary(_ operators: [String], next: (inout TokenStream) throws(TemplateError) -> Expression) throws(TemplateError) -> Expression {
        var left = try next(&self)
        while case .symbol(let symbol)? = peek, operators.contains(symbol) {
            let at = position
            advance()
            left = .binary(symbol, left, try next(&self), at)
        }
        return left
    }

    private mutating func parseMath1() throws(TemplateError) -> Expression {
        try parseBinary(["+", "-"]) { (stream: inout TokenStream) throws(TemplateError) in try stream.parseConcat() }
    }

    private mutating func parseConcat() throws(TemplateError) -> Expression {
        try parseBinary(["~"]) { (stream: inout TokenStream) throws(TemplateError) in try stream.parseMath2() }
    }

    private mutating func parseMath2() throws(TemplateError) -> Expression {
        try parseBinary(["*", "/", "//", "%"]) { (stream: inout TokenStream) throws(TemplateError) in try stream.parsePower() }
    }

    private mutating func parsePower() throws(TemplateError) -> Expression {
        try parseBinary(["**"]) { (stream: inout TokenStream) throws(TemplateError) in try stream.parseUnary(withFilter: true) }
    }

    private mutating func parseUnary(withFilter: Bool) throws(TemplateError) -> Expression {
        let at = position
        depth += 1
        defer { depth -= 1 }
        guard depth < 200 else { throw .syntax("the expression is nested more than 200 deep", at: at) }
        var expression: Expression
        if skip(.symbol("-")) {
            expression = .negate(try parseUnary(withFilter: false), at)
        } else if skip(.symbol("+")) {
            expression = try parseUnary(withFilter: false)
        } else {
            expression = try parsePrimary()
        }
        expression = try parsePostfix(expression)
        return withFilter ? try parseFilterExpression(expression) : expression
    }

    private mutating func parsePrimary() throws(TemplateError) -> Expression {
        let at = position
        guard let token = peek else { throw unexpected(expected: "expression") }
        advance()
        switch token {
        case .name(let name):
            switch name {
            case "true", "True": return .literal(.bool(true))
            case "false", "False": return .literal(.bool(false))
            case "none", "None": return .literal(.none)
            default: return .name(name, at)
            }
        case .string(var text):
            while case .string(let more)? = peek {
                text += more
                advance()
            }
            return .literal(.string(text))
        case .integer(let value):
            return .literal(.int(value))
        case .float(let value):
            return .literal(.float(value))
        case .symbol("("):
            if skip(.symbol(")")) { return .list([]) }
            let first = try parseExpression()
            if skip(.symbol(")")) { return first }
            var items = [first]
            while skip(.symbol(",")) {
                if peek == .symbol(")") { break }
                items.append(try parseExpression())
            }
            try expect(.symbol(")"))
            return .list(items)
        case .symbol("["):
            var items: [Expression] = []
            while !skip(.symbol("]")) {
                if !items.isEmpty { try expect(.symbol(",")) }
                if skip(.symbol("]")) { break }
                items.append(try parseExpression())
            }
            return .list(items)
        case .symbol("{"):
            var pairs: [(key: Expression, value: Expression)] = []
            while !skip(.symbol("}")) {
                if !pairs.isEmpty { try expect(.symbol(",")) }
                if skip(.symbol("}")) { break }
                let key = try parseExpression()
                try expect(.symbol(":"))
                pairs.append((key, try parseExpression()))
            }
            return .dictionary(pairs, at)
        default:
            index -= 1
            throw unexpected(expected: "expression")
        }
    }

    private mutating func parsePostfix(_ base: Expression) throws(TemplateError) -> Expression {
        var expression = base
        while true {
            let at = position
            if skip(.symbol(".")) {
                switch peek {
                case .name(let name)?:
                    advance()
                    expression = .attribute(expression, name, at)
                case .integer(let value)?:
                    advance()
                    expression = .subscript(expression, .literal(.int(value)), at)
                default:
                    throw unexpected(expected: "name")
                }
            } else if skip(.symbol("[")) {
                expression = try parseSubscript(expression, at: at)
            } else if peek == .symbol("(") {
                expression = .call(expression, try parseArguments(), at)
            } else {
                return expression
            }
        }
    }

    private mutating func parseSubscript(_ base: Expression, at: SourcePosition) throws(TemplateError) -> Expression {
        var parts: [Expression?] = [nil]
        var isSlice = false
        while !skip(.symbol("]")) {
            if skip(.symbol(":")) {
                isSlice = true
                parts.append(nil)
                continue
            }
            parts[parts.count - 1] = try parseExpression()
        }
        guard isSlice else {
            guard let index = parts[0] else { throw unexpected(expected: "expression") }
            return .subscript(base, index, at)
        }
        while parts.count < 3 { parts.append(nil) }
        return .slice(base, start: parts[0], stop: parts[1], step: parts[2], at)
    }

    private mutating func parseArguments() throws(TemplateError) -> Arguments {
        try expect(.symbol("("))
        var arguments = Arguments()
        var first = true
        while !skip(.symbol(")")) {
            if !first { try expect(.symbol(",")) }
            first = false
            if skip(.symbol(")")) { break }
            if case .name(let name)? = peek, index + 1 < tokens.count, tokens[index + 1].token == .symbol("=") {
                index += 2
                arguments.keywords.append((name, try parseExpression()))
            } else {
                arguments.positional.append(try parseExpression())
            }
        }
        return arguments
    }

    private mutating func parseFilterExpression(_ base: Expression) throws(TemplateError) -> Expression {
        var expression = base
        while true {
            let at = position
            if skip(.symbol("|")) {
                let name = try parseDottedName()
                let arguments = peek == .symbol("(") ? try parseArguments() : Arguments()
                expression = .filter(expression, name: name, arguments, at)
            } else if skip(.name("is")) {
                let negated = skip(.name("not"))
                let name = try parseDottedName()
                var arguments = Arguments()
                if peek == .symbol("(") {
                    arguments = try parseArguments()
                } else if let next = peek, Self.startsTestArgument(next) {
                    arguments.positional = [try parsePostfix(try parsePrimary())]
                }
                expression = .test(expression, name: name, arguments, negated: negated, at)
            } else if peek == .symbol("(") {
                expression = .call(expression, try parseArguments(), at)
            } else {
                return expression
            }
        }
    }

    /// Whether a test is followed by a bare argument (`is divisibleby 3`, `is sameas none`).
    private static func startsTestArgument(_ token: ExpressionToken) -> Bool {
        switch token {
        case .string, .integer, .float, .symbol("["), .symbol("{"): true
        case .name(let name): !["else", "or", "and", "in", "not", "is", "if"].contains(name)
        default: false
        }
    }
}

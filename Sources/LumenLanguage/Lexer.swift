/// Splits Lumen source into tokens.
///
/// Newlines end statements, except inside parentheses and square brackets, where they are
/// whitespace. `//` and `/* */` comments are skipped.
public struct Lexer {
    private let characters: [Character]
    private var index = 0
    private var line = 1
    private var column = 1
    private var bracketDepth = 0

    /// Prepares to lex `source`, whose first character is at `start` (for interpolated code).
    public init(_ source: String, start: SourceLocation = SourceLocation(line: 1, column: 1)) {
        characters = Array(source)
        line = start.line
        column = start.column
    }

    /// All tokens of the source, ending with `.end`.
    public static func tokenize(_ source: String, start: SourceLocation = SourceLocation(line: 1, column: 1)) throws(LumenError) -> [Token] {
        var lexer = Lexer(source, start: start)
        var tokens: [Token] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private static let symbols = [
        "...", "..<", "==", "!=", "<=", ">=", "&&", "||", "??", "->", "+=", "-=", "*=", "/=",
        "(", ")", "[", "]", "{", "}", ",", ":", ";", ".", "+", "-", "*", "/", "%", "<", ">", "=", "!", "?", "$",
    ].map { Array($0) }

    private var location: SourceLocation { SourceLocation(line: line, column: column) }

    private func peek(_ offset: Int = 0) -> Character? {
        index + offset < characters.count ? characters[index + offset] : nil
    }

    private mutating func advance() -> Character {
        let character = characters[index]
        index += 1
        if character == "\n" || character == "\r\n" {
            line += 1
            column = 1
        } else {
            column += 1
        }
        return character
    }

    /// The next token.
    public mutating func next() throws(LumenError) -> Token {
        while let character = peek() {
            let start = location
            if character == "\n" || character == "\r\n" {
                _ = advance()
                if bracketDepth == 0 { return Token(.newline, at: start) }
            } else if character.isWhitespace {
                _ = advance()
            } else if character == "/" && peek(1) == "/" {
                while let next = peek(), next != "\n", next != "\r\n" { _ = advance() }
            } else if character == "/" && peek(1) == "*" {
                try skipBlockComment(from: start)
            } else if character.isLetter || character == "_" {
                return identifier(from: start)
            } else if character.isASCII && character.isNumber {
                return try number(from: start)
            } else if character == "\"" {
                return try string(from: start)
            } else {
                return try symbol(from: start)
            }
        }
        return Token(.end, at: location)
    }

    private mutating func skipBlockComment(from start: SourceLocation) throws(LumenError) {
        _ = advance()
        _ = advance()
        var depth = 1
        while depth > 0 {
            guard let character = peek() else {
                throw LumenError(.syntax, "unterminated comment", at: start, needsMoreInput: true)
            }
            if character == "/" && peek(1) == "*" {
                depth += 1
                _ = advance()
            } else if character == "*" && peek(1) == "/" {
                depth -= 1
                _ = advance()
            }
            _ = advance()
        }
    }

    private mutating func identifier(from start: SourceLocation) -> Token {
        var name = ""
        while let character = peek(), character.isLetter || character.isNumber || character == "_" {
            name.append(advance())
        }
        return Token(Token.keywords.contains(name) ? .keyword(name) : .identifier(name), at: start)
    }

    private mutating func number(from start: SourceLocation) throws(LumenError) -> Token {
        var digits = ""
        var isFloat = false
        func takeDigits(_ lexer: inout Lexer, into digits: inout String) {
            while let character = lexer.peek(), character.isASCII && (character.isNumber || character == "_") {
                let taken = lexer.advance()
                if taken != "_" { digits.append(taken) }
            }
        }
        takeDigits(&self, into: &digits)
        if peek() == ".", let after = peek(1), after.isASCII && after.isNumber {
            isFloat = true
            digits.append(advance())
            takeDigits(&self, into: &digits)
        }
        if let exponent = peek(), exponent == "e" || exponent == "E" {
            let sign = peek(1)
            let hasSign = sign == "+" || sign == "-"
            if let digit = peek(hasSign ? 2 : 1), digit.isASCII && digit.isNumber {
                isFloat = true
                digits.append(advance())
                if hasSign { digits.append(advance()) }
                takeDigits(&self, into: &digits)
            }
        }
        if let trailing = peek(), trailing.isLetter || trailing == "_" {
            throw LumenError(.syntax, "'\(trailing)' is not valid in a number", at: location)
        }
        if isFloat {
            guard let value = Double(digits) else {
                throw LumenError(.syntax, "invalid number '\(digits)'", at: start)
            }
            return Token(.float(value), at: start)
        }
        guard let value = Int(digits) else {
            throw LumenError(.syntax, "integer literal \(digits) does not fit in 64 bits", at: start)
        }
        return Token(.integer(value), at: start)
    }

    private mutating func string(from start: SourceLocation) throws(LumenError) -> Token {
        _ = advance()
        let multiline = peek() == "\"" && peek(1) == "\""
        if multiline {
            _ = advance()
            _ = advance()
            // Input that ends at the opening quotes is a string still being typed (a script's line,
            // a REPL prompt): more lines will come.
            guard peek() != nil else { throw LumenError(.syntax, "unterminated string literal", at: start, needsMoreInput: true) }
            guard peek() == "\n" || peek() == "\r\n" else {
                throw LumenError(.syntax, "a multi-line string starts on the line after its opening \"\"\"", at: location)
            }
            _ = advance()
        }
        var segments: [Token.StringSegment] = []
        var text = ""
        while true {
            guard let character = peek() else {
                throw LumenError(.syntax, "unterminated string literal", at: start, needsMoreInput: multiline)
            }
            if !multiline && (character == "\n" || character == "\r\n") {
                throw LumenError(.syntax, "unterminated string literal", at: start)
            }
            if character == "\"" && (!multiline || (peek(1) == "\"" && peek(2) == "\"")) {
                for _ in 0..<(multiline ? 3 : 1) { _ = advance() }
                break
            }
            _ = advance()
            if character == "\\" && peek() == "(" {
                if !text.isEmpty { segments.append(.text(text)) }
                text = ""
                segments.append(try interpolation())
            } else if character == "\\" {
                text.append(try escape())
            } else {
                text.append(character)
            }
        }
        if !text.isEmpty || segments.isEmpty { segments.append(.text(text)) }
        if multiline { segments = Self.removeIndentation(segments) }
        if segments.count == 1, case .text(let plain) = segments[0] { return Token(.string(plain), at: start) }
        return Token(.interpolatedString(segments), at: start)
    }

    /// The source of `\( … )` up to its matching parenthesis (strings inside are skipped whole).
    private mutating func interpolation() throws(LumenError) -> Token.StringSegment {
        let open = location
        _ = advance()
        let start = location
        var code = ""
        var depth = 1
        var inString = false
        while let character = peek() {
            if character == "\n" || character == "\r\n" { break }
            _ = advance()
            if inString {
                if character == "\\", let next = peek() {
                    code.append(character)
                    code.append(next)
                    _ = advance()
                    continue
                }
                if character == "\"" { inString = false }
            } else if character == "\"" {
                inString = true
            } else if character == "(" {
                depth += 1
            } else if character == ")" {
                depth -= 1
                if depth == 0 { return .code(code, start) }
            }
            code.append(character)
        }
        throw LumenError(.syntax, "unterminated interpolation \\( in string literal", at: open)
    }

    /// A multi-line string's text without its final line break and with the indentation of its
    /// closing delimiter removed from every line.
    private static func removeIndentation(_ segments: [Token.StringSegment]) -> [Token.StringSegment] {
        guard case .text(let last)? = segments.last, let lastBreak = last.lastIndex(of: "\n") else { return segments }
        let indentation = last[last.index(after: lastBreak)...]
        guard indentation.allSatisfy({ $0 == " " || $0 == "\t" }) else { return segments }
        var result = segments
        result[result.count - 1] = .text(String(last[..<lastBreak]))
        return result.enumerated().map { offset, segment in
            guard case .text(let text) = segment, !indentation.isEmpty else { return segment }
            var lines = text.components(separatedBy: "\n")
            for index in lines.indices where (index > 0 || offset == 0) && lines[index].hasPrefix(indentation) {
                lines[index].removeFirst(indentation.count)
            }
            return .text(lines.joined(separator: "\n"))
        }
    }

    private mutating func escape() throws(LumenError) -> Character {
        let start = location
        guard let character = peek() else {
            throw LumenError(.syntax, "unterminated string literal", at: start, needsMoreInput: true)
        }
        _ = advance()
        switch character {
        case "n": return "\n"
        case "t": return "\t"
        case "r": return "\r"
        case "0": return "\0"
        case "\\", "\"", "'": return character
        case "u":
            guard peek() == "{" else { break }
            _ = advance()
            var hex = ""
            while let digit = peek(), digit != "}" {
                hex.append(advance())
            }
            guard peek() == "}", let scalarValue = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(scalarValue) else {
                throw LumenError(.syntax, "invalid Unicode escape \\u{\(hex)}", at: start)
            }
            _ = advance()
            return Character(scalar)
        default: break
        }
        throw LumenError(.syntax, "invalid escape sequence \\\(character)", at: start)
    }

    private mutating func symbol(from start: SourceLocation) throws(LumenError) -> Token {
        for symbol in Self.symbols where matches(symbol) {
            for _ in symbol { _ = advance() }
            let text = String(symbol)
            if text == "(" || text == "[" { bracketDepth += 1 }
            if text == ")" || text == "]" { bracketDepth = max(0, bracketDepth - 1) }
            return Token(.symbol(text), at: start)
        }
        let character = advance()
        throw LumenError(.syntax, "unexpected character '\(character)'", at: start)
    }

    private func matches(_ symbol: [Character]) -> Bool {
        for (offset, character) in symbol.enumerated() where peek(offset) != character {
            return false
        }
        return true
    }
}

/// Cuts a template into text and tags as jinja2 does with `trim_blocks` and `lstrip_blocks` on:
/// `{%-`/`-%}` strip whitespace, `{%+`/`+%}` keep it, a newline right after a block or comment
/// tag is dropped, and spaces before a block or comment tag alone on its line are dropped. Line
/// endings are normalised to `\n` and one trailing newline is removed (`keep_trailing_newline`
/// off), as jinja2 does.
struct TemplateLexer {
    /// A piece of the template.
    enum Piece: Equatable {
        case text(String)
        /// `{{ … }}`: the expression's tokens.
        case output([PositionedToken], SourcePosition)
        /// `{% … %}`: the statement's tokens.
        case statement([PositionedToken], SourcePosition)
    }

    private let source: [Unicode.Scalar]
    private var index = 0
    private var line = 1
    private var column = 1

    init(_ template: String) {
        source = Array(Self.normalizingLineEndings(template).unicodeScalars)
    }

    /// Python's `splitlines()` then `"\n".join`: every line boundary becomes `\n` and a final one
    /// is dropped.
    static func normalizingLineEndings(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        let scalars = Array(text.unicodeScalars)
        var position = 0
        while position < scalars.count {
            let scalar = scalars[position]
            switch scalar.value {
            case 0x0D:
                result.append("\n")
                if position + 1 < scalars.count, scalars[position + 1] == "\n" { position += 1 }
            case 0x0A, 0x0B, 0x0C, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029:
                result.append("\n")
            default:
                result.append(scalar)
            }
            position += 1
        }
        if result.last == "\n" { result.removeLast() }
        return String(result)
    }

    /// The pieces of the template.
    mutating func pieces() throws(TemplateError) -> [Piece] {
        var pieces: [Piece] = []
        var text = String.UnicodeScalarView()
        var lineStarting = true
        var stripNextText = false
        while index < source.count {
            guard source[index] == "{", index + 1 < source.count, ["{", "%", "#"].contains(source[index + 1]) else {
                text.append(source[index])
                advance()
                continue
            }
            let opener = source[index + 1]
            let start = SourcePosition(line: line, column: column)
            let sign: Unicode.Scalar? = index + 2 < source.count && (source[index + 2] == "-" || source[index + 2] == "+") ? source[index + 2] : nil
            // Whitespace before the tag.
            if stripNextText { text = Self.strippingLeadingWhitespace(text) }
            stripNextText = false
            if sign == "-" {
                while let last = text.last, last.properties.isWhitespace { text.removeLast() }
            } else if sign != "+", opener != "{" {
                var lineStart = text.endIndex
                while lineStart > text.startIndex, text[text.index(before: lineStart)] != "\n" { lineStart = text.index(before: lineStart) }
                let onlyBlanks = text[lineStart...].allSatisfy { $0 == " " || $0 == "\t" }
                if onlyBlanks, lineStart > text.startIndex || lineStarting {
                    text.removeSubrange(lineStart...)
                }
            }
            if !text.isEmpty { pieces.append(.text(String(text))) }
            text = String.UnicodeScalarView()
            advance(by: sign == nil ? 2 : 3)

            if opener == "#" {
                try skipComment(from: start)
            } else {
                let closer: Unicode.Scalar = opener == "{" ? "}" : "%"
                var tokenizer = ExpressionTokenizer(source: source)
                tokenizer.index = index
                tokenizer.position = SourcePosition(line: line, column: column)
                let tokens = try tokenizer.tokens(until: closer, tagStart: start)
                index = tokenizer.index
                line = tokenizer.position.line
                column = tokenizer.position.column
                if opener == "%", tokens.first?.token == .name("raw") {
                    try readRaw(start: start, into: &pieces)
                    lineStarting = false
                    continue
                }
                pieces.append(opener == "{" ? .output(tokens, start) : .statement(tokens, start))
            }
            // Whitespace after the tag: `-` strips it, `+` keeps it, trim_blocks drops one newline.
            let closingSign = tokensClosingSign
            lineStarting = false
            if closingSign == "-" {
                stripNextText = true
            } else if closingSign != "+", opener != "{", index < source.count, source[index] == "\n" {
                advance()
                lineStarting = true
            }
        }
        if stripNextText { text = Self.strippingLeadingWhitespace(text) }
        if !text.isEmpty { pieces.append(.text(String(text))) }
        return pieces
    }

    /// The sign (`-`, `+` or nil) just before the tag's closing characters, which the last
    /// tokenizing step left behind `index`.
    private var tokensClosingSign: Unicode.Scalar? {
        guard index >= 3 else { return nil }
        let sign = source[index - 3]
        return sign == "-" || sign == "+" ? sign : nil
    }

    private static func strippingLeadingWhitespace(_ text: String.UnicodeScalarView) -> String.UnicodeScalarView {
        var text = text
        while let first = text.first, first.properties.isWhitespace { text.removeFirst() }
        return text
    }

    private mutating func advance(by count: Int = 1) {
        for _ in 0..<count where index < source.count {
            if source[index] == "\n" {
                line += 1
                column = 1
            } else {
                column += 1
            }
            index += 1
        }
    }

    private mutating func skipComment(from start: SourcePosition) throws(TemplateError) {
        while index + 1 < source.count {
            if source[index] == "#", source[index + 1] == "}" {
                advance(by: 2)
                return
            }
            advance()
        }
        throw .syntax("Missing end of comment tag", at: start)
    }

    /// `{% raw %}…{% endraw %}`: the text in between, verbatim.
    private mutating func readRaw(start: SourcePosition, into pieces: inout [Piece]) throws(TemplateError) {
        var text = String.UnicodeScalarView()
        while index < source.count {
            if source[index] == "{", index + 1 < source.count, source[index + 1] == "%" {
                var probe = index + 2
                if probe < source.count, source[probe] == "-" || source[probe] == "+" { probe += 1 }
                while probe < source.count, source[probe] == " " || source[probe] == "\t" || source[probe] == "\n" { probe += 1 }
                let word = "endraw".unicodeScalars
                if probe + word.count <= source.count, Array(source[probe..<(probe + word.count)]) == Array(word) {
                    if source[index + 2] == "-" { while let last = text.last, last.properties.isWhitespace { text.removeLast() } }
                    var end = probe + word.count
                    while end + 1 < source.count, !(source[end] == "%" && source[end + 1] == "}") { end += 1 }
                    advance(by: end + 2 - index)
                    if !text.isEmpty { pieces.append(.text(String(text))) }
                    return
                }
            }
            text.append(source[index])
            advance()
        }
        throw .syntax("Unexpected end of template. Jinja was looking for the following tags: 'endraw'.", at: start)
    }
}

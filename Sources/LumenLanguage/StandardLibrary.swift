import Evaluation

/// The built-in functions every Lumen session starts with.
enum StandardLibrary {
    static let all: [Builtin] = [print, eprint, sleep, display, input]

    static let print = Builtin(
        name: "print",
        signature: "print(_ items..., separator: String = \" \", terminator: String = \"\\n\")",
        summary: "Writes the items to standard output, separated by `separator` and followed by `terminator`."
    ) { arguments, context in
        context.output.stream(.stdout, try joined(&arguments))
        return .null
    }

    static let eprint = Builtin(
        name: "eprint",
        signature: "eprint(_ items..., separator: String = \" \", terminator: String = \"\\n\")",
        summary: "Writes the items to standard error, like `print`."
    ) { arguments, context in
        context.output.stream(.stderr, try joined(&arguments))
        return .null
    }

    private static func joined(_ arguments: inout Arguments) throws(LumenError) -> String {
        let items = arguments.remainingPositional().map { $0.0.printed }
        let separator = try arguments.labelled("separator").map { argument throws(LumenError) in try arguments.string(argument, "separator") } ?? " "
        let terminator = try arguments.labelled("terminator").map { argument throws(LumenError) in try arguments.string(argument, "terminator") } ?? "\n"
        try arguments.finish()
        return items.joined(separator: separator) + terminator
    }

    static let sleep = Builtin(
        name: "sleep",
        signature: "sleep(_ seconds: Double)",
        summary: "Pauses for `seconds`. An interrupt ends the pause at once."
    ) { arguments, _ in
        let argument = try arguments.requirePositional("seconds")
        let seconds = try arguments.number(argument, "seconds")
        try arguments.finish()
        guard seconds >= 0, seconds.isFinite else {
            throw LumenError(.value, "sleep() needs a duration of 0 seconds or more, got \(seconds)", at: argument.1)
        }
        try await Task.sleep(for: .seconds(seconds))
        return .null
    }

    static let display = Builtin(
        name: "display",
        signature: "display(html: String)",
        summary: "Shows `html` rendered as HTML in the output area."
    ) { arguments, context in
        let html = try arguments.string(try arguments.requireLabelled("html"), "html")
        try arguments.finish()
        context.output.display(MIMEBundle(["text/html": html, "text/plain": plainText(ofHTML: html)]), displayID: nil)
        return .null
    }

    static let input = Builtin(
        name: "input",
        signature: "input(_ prompt: String = \"\", password: Bool = false) -> String",
        summary: "Asks the user for a line of text and returns it."
    ) { arguments, context in
        let prompt = try arguments.nextPositional().map { argument throws(LumenError) in try arguments.string(argument, "prompt") } ?? ""
        let password: Bool
        switch arguments.labelled("password") {
        case nil: password = false
        case (.bool(let flag), _)?: password = flag
        case (let other, let location)?:
            throw LumenError(.type, "input() expects a Bool for 'password', got \(other.typeName)", at: location)
        }
        try arguments.finish()
        do {
            return .string(try await context.output.requestInput(prompt: prompt, password: password))
        } catch let error as InputUnavailableError {
            throw LumenError(.input, "input() is not available: \(error.reason)", at: context.location)
        }
    }

    /// A rough plain-text fallback for HTML: the text between tags.
    static func plainText(ofHTML html: String) -> String {
        var text = ""
        var inTag = false
        for character in html {
            if character == "<" { inTag = true } else if character == ">" { inTag = false } else if !inTag { text.append(character) }
        }
        return text
    }
}

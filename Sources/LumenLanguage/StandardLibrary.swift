import Evaluation
import Foundation

/// The built-in functions every Lumen session starts with.
enum StandardLibrary {
    static let all: [Builtin] = DisplayLibrary.all + JobLibrary.all + TensorLibrary.all + [print, eprint, sleep, input, env, len, string, int, double, minimum, maximum, sum, mean,
                                 stdev, sorted, range, stride, now, random, assert]

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
        let separator = try arguments.labelledString("separator") ?? " "
        let terminator = try arguments.labelledString("terminator") ?? "\n"
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

    static let env = Builtin(
        name: "env",
        signature: "env(_ name: String) -> String?",
        summary: "The environment variable's value, or nil. A variable whose name says it is a secret (…KEY, …TOKEN, …SECRET, …PASSWORD) gives a Secret, shown as •••• and accepted by connect(apiKey:)."
    ) { arguments, _ in
        let name = try arguments.string(try arguments.requirePositional("name"), "name")
        try arguments.finish()
        guard let value = ProcessInfo.processInfo.environment[name] else { return .null }
        return Secret.isSecretName(name) ? .host(Secret(variable: name, value: value)) : .string(value)
    }

    static let len = Builtin(name: "len", signature: "len(_ collection) -> Int", summary: "The number of elements of an array, dictionary, range or string.") { arguments, context in
        let (value, location) = try arguments.requirePositional("collection")
        try arguments.finish()
        return try Methods.member("count", of: value, at: location)
    }

    static let string = Builtin(name: "String", signature: "String(_ value) -> String", summary: "The value as text, as `print` shows it.") { arguments, _ in
        let value = try arguments.requirePositional("value").0
        try arguments.finish()
        return .string(value.printed)
    }

    static let int = Builtin(name: "Int", signature: "Int(_ value) -> Int?", summary: "The value as an Int: Doubles are truncated; text that is not a number gives nil.") { arguments, context in
        let (value, location) = try arguments.requirePositional("value")
        try arguments.finish()
        switch value {
        case .integer: return value
        case .double(let number):
            guard number.isFinite, Swift.abs(number) < 9.2e18 else { throw LumenError(.value, "\(number) does not fit in an Int", at: location) }
            return .integer(Int(number))
        case .bool(let flag): return .integer(flag ? 1 : 0)
        case .string(let text): return Int(text.trimmingCharacters(in: .whitespaces)).map { .integer($0) } ?? .null
        default: throw LumenError(.type, "Int() cannot convert a \(value.typeName)", at: location)
        }
    }

    static let double = Builtin(name: "Double", signature: "Double(_ value) -> Double?", summary: "The value as a Double; text that is not a number gives nil.") { arguments, context in
        let (value, location) = try arguments.requirePositional("value")
        try arguments.finish()
        if case .string(let text) = value { return Double(text.trimmingCharacters(in: .whitespaces)).map { .double($0) } ?? .null }
        guard let number = Operators.number(value) else { throw LumenError(.type, "Double() cannot convert a \(value.typeName)", at: location) }
        return .double(number)
    }

    /// The numbers of a call's arguments (one array or range, or several numbers), and whether
    /// all of them are Ints, so that results of Int inputs stay Ints.
    private static func numbers(_ arguments: inout Arguments, _ function: String) throws -> (values: [Double], integers: Bool) {
        let given = arguments.remainingPositional()
        try arguments.finish()
        let values = given.count == 1 ? try Operators.elements(of: given[0].0, at: given[0].1) : given.map(\.0)
        var integers = true
        let numbers = try values.map { value in
            if case .integer = value {} else { integers = false }
            guard let number = Operators.number(value) else {
                throw LumenError(.type, "\(function)() needs numbers, got \(value.typeName)", at: given.first?.1)
            }
            return number
        }
        return (numbers, integers)
    }

    private static func number(_ value: Double, integer: Bool) -> Value {
        integer && Swift.abs(value) < 9e18 ? .integer(Int(value)) : .double(value)
    }

    static let minimum = Builtin(name: "min", signature: "min(_ numbers...) -> Number", summary: "The smallest of the numbers (or of one array's; of a Tensor's, over axis: — an Int or an array of Ints — when given, keepdims: true keeping them).") { arguments, context in
        if let reduced = try await TensorLibrary.reduced(&arguments, .min, at: context.location) { return reduced }
        let (values, integers) = try numbers(&arguments, "min")
        guard let smallest = values.min() else { throw LumenError(.value, "min() of nothing", at: context.location) }
        return number(smallest, integer: integers)
    }

    static let maximum = Builtin(name: "max", signature: "max(_ numbers...) -> Number", summary: "The largest of the numbers (or of one array's; of a Tensor's, over axis: — an Int or an array of Ints — when given, keepdims: true keeping them).") { arguments, context in
        if let reduced = try await TensorLibrary.reduced(&arguments, .max, at: context.location) { return reduced }
        let (values, integers) = try numbers(&arguments, "max")
        guard let largest = values.max() else { throw LumenError(.value, "max() of nothing", at: context.location) }
        return number(largest, integer: integers)
    }

    static let sum = Builtin(name: "sum", signature: "sum(_ numbers) -> Number", summary: "The sum of an array's numbers (of a Tensor's, over axis: — an Int or an array of Ints — when given, keepdims: true keeping them).") { arguments, context in
        if let reduced = try await TensorLibrary.reduced(&arguments, .sum, at: context.location) { return reduced }
        let (values, integers) = try numbers(&arguments, "sum")
        return number(values.reduce(0, +), integer: integers)
    }

    static let mean = Builtin(name: "mean", signature: "mean(_ numbers) -> Double", summary: "The arithmetic mean of an array's numbers (of a Tensor's, over axis: — an Int or an array of Ints — when given, keepdims: true keeping them).") { arguments, context in
        if let reduced = try await TensorLibrary.reduced(&arguments, .mean, at: context.location) { return reduced }
        let values = try numbers(&arguments, "mean").values
        guard !values.isEmpty else { throw LumenError(.value, "mean() of nothing", at: context.location) }
        return .double(values.reduce(0, +) / Double(values.count))
    }

    static let stdev = Builtin(name: "stdev", signature: "stdev(_ numbers) -> Double", summary: "The sample standard deviation of an array's numbers.") { arguments, context in
        let values = try numbers(&arguments, "stdev").values
        guard values.count > 1 else { throw LumenError(.value, "stdev() needs at least two numbers", at: context.location) }
        let average = values.reduce(0, +) / Double(values.count)
        return .double((values.map { ($0 - average) * ($0 - average) }.reduce(0, +) / Double(values.count - 1)).squareRoot())
    }

    static let sorted = Builtin(name: "sorted", signature: "sorted(_ sequence, by: order = nil) -> Array", summary: "The elements in ascending order, or ordered by a closure returning true when its first argument comes first.") { arguments, context in
        let (value, location) = try arguments.requirePositional("sequence")
        let order = arguments.nextPositional()?.0 ?? arguments.labelled("by")?.0
        try arguments.finish()
        return .array(try await Methods.sort(try Operators.elements(of: value, at: location), by: order, context: context))
    }

    static let range = Builtin(name: "range", signature: "range(_ end) or range(_ start, _ end) -> Range", summary: "The integers from start (default 0) up to, not including, end.") { arguments, context in
        let first = try arguments.integer(try arguments.requirePositional("end"), "end")
        let second = try arguments.nextPositional().map { argument throws(LumenError) in try arguments.integer(argument, "end") }
        try arguments.finish()
        let (lower, upper) = second.map { (first, $0) } ?? (0, first)
        return try Operators.range(lower, upTo: max(lower, upper), written: "range(\(lower), \(upper))", at: context.location)
    }

    static let stride = Builtin(name: "stride", signature: "stride(from: Number, to: Number, by: Number) -> Array", summary: "Numbers from `from` up to (not including) `to`, `by` apart.") { arguments, context in
        let start = try arguments.requireLabelled("from"), end = try arguments.requireLabelled("to"), step = try arguments.requireLabelled("by")
        try arguments.finish()
        let (a, b, c) = (try arguments.number(start, "from"), try arguments.number(end, "to"), try arguments.number(step, "by"))
        guard c != 0, c.isFinite else { throw LumenError(.value, "stride() needs a non-zero step", at: step.1) }
        let values = Swift.stride(from: a, to: b, by: c).prefix(10_000_000)
        let integers = [start.0, end.0, step.0].allSatisfy { if case .integer = $0 { true } else { false } }
        return .array(values.map { integers ? .integer(Int($0)) : .double($0) })
    }

    static let now = Builtin(name: "now", signature: "now() -> Double", summary: "Seconds since 1970, with sub-millisecond precision: subtract two to time something.") { arguments, _ in
        try arguments.finish()
        return .double(Date().timeIntervalSince1970)
    }

    static let random = Builtin(
        name: "random",
        signature: "random(in: Range? = nil, seed: Int? = nil) -> Double or Int",
        summary: "A random Double in [0, 1), or an Int from a range with `in:`; `seed:` restarts the session's sequence so results repeat."
    ) { arguments, context in
        let range = arguments.labelled("in")
        let seed = try arguments.labelledInteger("seed")
        try arguments.finish()
        if let seed { context.session.random.reseed(UInt64(bitPattern: Int64(seed))) }
        guard let (bounds, location) = range else { return .double(context.session.random.unit()) }
        guard case .range(let lower, let upper) = bounds, upper > lower else {
            throw LumenError(.value, "random(in:) needs a non-empty Int range, got \(bounds.description)", at: location)
        }
        let width = UInt64(upper - lower)
        return .integer(lower + Int(context.session.random.next() % width))
    }

    static let assert = Builtin(name: "assert", signature: "assert(_ condition: Bool, _ message: String = \"\")", summary: "Fails the cell with an AssertionError when the condition is false.") { arguments, context in
        let (condition, location) = try arguments.requirePositional("condition")
        let message = try arguments.nextPositional().map { argument throws(LumenError) in try arguments.string(argument, "message") }
        try arguments.finish()
        guard case .bool(let holds) = condition else {
            throw LumenError(.type, "assert() needs a Bool condition, got \(condition.typeName)", at: location)
        }
        if !holds { throw LumenError(.assertion, message ?? "assertion failed", at: context.location) }
        return .null
    }
}

import Evaluation
import LanguageTestSupport
import Synchronization
import Testing
@testable import LumenLanguage

/// A host object of the test library: a greeter whose `greet` method is the library's built-in.
private final class Greeter: MemberTableHostObject {
    let name: String
    init(name: String) { self.name = name }
    var typeName: String { "Greeter" }
    var summary: String { "Greeter(\(name))" }
    var mimeBundle: MIMEBundle { .plainText(summary) }
    static let memberTable = MemberTable<Greeter>(properties: [("name", { .string($0.name) })], methods: [GreetingLibrary.greet])
}

/// A library plugged in from outside the language core, as the model host is: built-ins, a host
/// object, a magic, a completion provider, and state kept per session.
private final class GreetingLibrary: LumenLibrary {
    /// How many greetings this session's library has made.
    let greetings = Mutex(0)
    /// How many times the session's records were flushed.
    let flushes = Mutex(0)

    let builtins: [Builtin] = [
        Builtin(name: "greeter", signature: "greeter(_ name: String) -> Greeter", summary: "A greeter.") { arguments, _ in
            let name = try arguments.string(try arguments.requirePositional("name"), "name")
            try arguments.finish()
            return .host(Greeter(name: name))
        },
        greet,
    ]

    /// A Greeter's method too (`g.greet()`).
    static let greet = Builtin(name: "greet", signature: "greet(_ greeter, times: Int = 1, loud: Bool = false) -> String", summary: "Greets.") { arguments, context in
        let (value, location) = try arguments.requirePositional("greeter")
        guard case .host(let object) = value, let greeter = object as? Greeter else {
            throw LumenError(.type, "expected a Greeter", at: location)
        }
        let times = try arguments.labelledInteger("times") ?? 1
        let loud = try arguments.labelledBool("loud") ?? false
        try arguments.finish()
        let count = try context.library(GreetingLibrary.self).greetings.withLock { count in
            count += 1
            return count
        }
        let text = Array(repeating: "hello \(greeter.name)", count: times).joined(separator: ", ")
        return .string((loud ? text.uppercased() : text) + " #\(count)")
    }

    let magics: [Magic] = [
        Magic(name: "%greet", summary: "greet someone: %greet NAME") { words, _ in
            guard let name = words.first else { throw LumenError(.value, "%greet needs a name") }
            return "greet(greeter(\"\(name)\"))"
        },
    ]

    func completion(before text: String) -> TextCompletion? {
        guard let open = text.range(of: "greeter(\"", options: .backwards) else { return nil }
        let partial = String(text[open.upperBound...])
        return TextCompletion(partial: partial, candidates: ["Ada", "Alan", "Grace"].filter { $0.hasPrefix(partial) })
    }

    func flush() async {
        flushes.withLock { $0 += 1 }
    }
}

@Suite("Libraries plugged into the interpreter")
struct LibraryTests {
    func run(_ code: String, on interpreter: Interpreter) async throws -> RecordingSink {
        let sink = RecordingSink()
        try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: sink)
        return sink
    }

    @Test("a library's built-ins are callable, as functions and as methods of its host objects, and keep state per session")
    func builtinsAndMethods() async throws {
        let interpreter = Interpreter(libraries: [GreetingLibrary()])
        #expect(try await run("greet(greeter(\"Ada\"), times: 2)", on: interpreter).results == ["\"hello Ada, hello Ada #1\""])
        #expect(try await run("greeter(\"Alan\").greet(loud: true)", on: interpreter).results == ["\"HELLO ALAN #2\""])
        #expect(try await run("greeter(\"Alan\").name", on: interpreter).results == ["\"Alan\""])
        // Another session has its own instance of the library, so its own count.
        let other = Interpreter(libraries: [GreetingLibrary()])
        #expect(try await run("greet(greeter(\"Grace\"))", on: other).results == ["\"hello Grace #1\""])
        // Without the library, its names are not defined.
        await #expect(throws: ExecutionError.self) { try await run("greeter(\"Ada\")", on: Interpreter()) }
    }

    @Test("help on a method pages its built-in's documentation, and on a host object its members from the type's table")
    func helpFromTheMemberTable() async throws {
        let interpreter = Interpreter(libraries: [GreetingLibrary()])
        _ = try await run("let g = greeter(\"Ada\")", on: interpreter)
        func page(_ code: String) async throws -> String {
            guard case .page(let bundle)? = try await run(code, on: interpreter).events.first else { return "" }
            return bundle.plainText ?? ""
        }
        #expect(try await page("help(g.greet)") == "\(GreetingLibrary.greet.signature)\n\n\(GreetingLibrary.greet.summary)")
        let members = try await page("help(g)")
        #expect(members.hasPrefix("Greeter: Greeter(Ada)"))
        #expect(members.contains("name") && members.contains("greet(…)") && members.contains("Greets."))
        // A member the table does not have is an error naming those it has.
        let error = await #expect(throws: ExecutionError.self) { try await run("g.wave()", on: interpreter) }
        #expect(error?.message.contains("a Greeter has no member 'wave': it has greet, name") == true)
    }

    @Test("completion offers the argument labels of the call the cursor is in, as its signature lists them")
    func completionOfArgumentLabels() async throws {
        let interpreter = Interpreter(libraries: [GreetingLibrary()])
        _ = try await run("let g = greeter(\"Ada\")", on: interpreter)
        // The oracle is the signature help shows, read independently of the completer's scanner.
        let help = await interpreter.inspect("greet", cursor: 5, detailLevel: 0)?.plainText ?? ""
        #expect(help.contains("times:") && help.contains("loud:"))
        let cell = "greet(g, tim"
        let completion = await interpreter.complete(cell, cursor: cell.unicodeScalars.count)
        #expect(completion.matches == ["times:"])
        #expect(completion.start == 9)
        let member = "g.greet(times: 2, lou"
        #expect(await interpreter.complete(member, cursor: member.unicodeScalars.count).matches == ["loud:"])
        #expect(await interpreter.complete("g.gr", cursor: 4).matches == ["greet"])
        // Outside an argument position, or inside a nested call or collection, no labels.
        #expect(await interpreter.complete("tim", cursor: 3).matches.isEmpty)
        let nested = "greet(g, [1, tim"
        #expect(await interpreter.complete(nested, cursor: nested.unicodeScalars.count).matches.isEmpty)
        let call = "greet(g, len(tim"
        #expect(await interpreter.complete(call, cursor: call.unicodeScalars.count).matches.isEmpty)
    }

    @Test("a library's completion provider answers inside its string argument")
    func completionProvider() async {
        let interpreter = Interpreter(libraries: [GreetingLibrary()])
        let cell = "let g = greeter(\"A"
        let completion = await interpreter.complete(cell, cursor: cell.unicodeScalars.count)
        #expect(completion.matches == ["Ada", "Alan"])
        #expect(completion.start == cell.unicodeScalars.count - 1 && completion.end == cell.unicodeScalars.count)
    }

    @Test("a library's magic runs, is listed by %lsmagic, and unknown magics name it")
    func magics() async throws {
        let interpreter = Interpreter(libraries: [GreetingLibrary()])
        #expect(try await run("%greet Grace", on: interpreter).results == ["\"hello Grace #1\""])
        #expect(try await run("%lsmagic", on: interpreter).stdout.contains("%greet  greet someone: %greet NAME"))
        let session = Session(libraries: [GreetingLibrary()])
        #expect(await session.run("%wave") == "NameError: unknown magic %wave; available: %time, %%time, %who, %reset, %history, %jobs, %lsmagic, %greet")
        #expect(await session.run("%greet") == "ValueError: %greet needs a name")
    }

    @Test("flushing the session's records flushes every library")
    func flush() async {
        let library = GreetingLibrary()
        let interpreter = Interpreter(libraries: [library])
        await interpreter.flushRecords()
        await interpreter.flushRecords()
        #expect(library.flushes.withLock { $0 } == 2)
    }
}

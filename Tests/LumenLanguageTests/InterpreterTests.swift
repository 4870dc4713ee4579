import Evaluation
import LanguageTestSupport
import Foundation
import Testing
@testable import LumenLanguage

@Suite("Interpreter")
struct InterpreterTests {
    func run(_ code: String, on interpreter: Interpreter = Interpreter(), sink: RecordingSink = RecordingSink(), count: Int = 1) async -> (RecordingSink, ExecutionError?) {
        do {
            try await interpreter.execute(ExecutionRequest(code: code, executionCount: count), output: sink)
            return (sink, nil)
        } catch {
            return (sink, error)
        }
    }

    @Test("print and eprint write streams with separator and terminator")
    func printing() async {
        let (sink, error) = await run(#"print("a", 1, 2.5, true, nil)"# + "\n" + #"eprint("e", separator: "-", terminator: "!")"# + "\n" + #"print("x", "y", separator: "")"#)
        #expect(error == nil)
        #expect(sink.events == [
            .stream(.stdout, "a 1 2.5 true nil\n"), .stream(.stderr, "e!"), .stream(.stdout, "xy\n"),
        ])
    }

    @Test("a long collection is shown by its ends and count (as NumPy abbreviates); print and the value keep every element")
    func longCollectionsAbbreviated() async {
        #expect(await run("range(100000).map { $0 }").0.results == ["[0, 1, 2, … 99997, 99998, 99999] (100000 elements)"])
        #expect(await run("[range(1001).map { $0 * 2 }]").0.results == ["[[0, 2, 4, … 1996, 1998, 2000] (1001 elements)]"])
        let thousand = (0..<1000).map(String.init).joined(separator: ", ")
        #expect(await run("range(1000).map { $0 }").0.results == ["[\(thousand)]"])
        let (printed, _) = await run("let xs = range(1001).map { $0 }\nprint(xs.count, xs[1000])\nprint(xs)")
        #expect(printed.stdout == "1001 1000\n[" + (0...1000).map(String.init).joined(separator: ", ") + "]\n")
    }

    @Test("a mean and deviation for people: the deviation to two significant figures, the mean to its decimal place")
    func meanAndDeviation() {
        #expect(Measurement.meanAndDeviation(19944.6, 2083.4) == "19945 ± 2083")
        #expect(Measurement.meanAndDeviation(41.73, 3.21) == "41.7 ± 3.2")
        #expect(Measurement.meanAndDeviation(0.9312, 0.0123) == "0.931 ± 0.012")
        #expect(Measurement.meanAndDeviation(512.4, 0) == "512 ± 0")
        #expect(Measurement.meanAndDeviation(5.126, 0) == "5.13 ± 0.00")
    }

    @Test("the last bare expression is the result, nil is not shown, strings are quoted")
    func results() async {
        #expect(await run("1\n\"two\"").0.results == ["\"two\""])
        #expect(await run("-3").0.results == ["-3"])
        #expect(await run("nil").0.results.isEmpty)
        #expect(await run("print(1)").0.results.isEmpty)
        let silent = RecordingSink()
        try? await Interpreter().execute(ExecutionRequest(code: "5", executionCount: 1, silent: true), output: silent)
        #expect(silent.results.isEmpty)
    }

    @Test("display(html:) publishes HTML with a plain-text fallback")
    func display() async {
        let (sink, _) = await run(#"display(html: "<b>hi</b> there")"#)
        #expect(sink.events == [.display(MIMEBundle(["text/html": "<b>hi</b> there", "text/plain": "hi there"]), nil)])
    }

    @Test("a name error has a traceback with the line and a caret under the column")
    func nameError() async {
        let (_, error) = await run("print(1)\nprint(  missing)", count: 7)
        #expect(error?.name == "NameError")
        #expect(error?.message == "'missing' is not defined")
        #expect(error?.traceback == [
            "  Cell In[7], line 2", "    print(  missing)", "            ^", "NameError: 'missing' is not defined",
        ])
    }

    @Test("type errors name the function and argument")
    func typeErrors() async {
        #expect(await run(#"sleep("long")"#).1?.message == "sleep() expects a number for 'seconds', got String")
        #expect(await run("display()").1?.message == "display() is missing its argument 'value'")
        #expect(await run(#"display(html: "x", 1)"#).1?.message == "display() got too many arguments")
        #expect(await run(#"print(1, sep: "")"#).1?.message == "print() has no argument labelled 'sep:'")
        #expect(await run("1(2)").1?.name == "TypeError")
        #expect(await run("sleep(-1)").1?.name == "ValueError")
        #expect(await run("-(-9223372036854775807)").0.results == ["9223372036854775807"])
    }

    @Test("statements after an error do not run")
    func stopsAtError() async {
        let (sink, error) = await run("print(1)\nnope\nprint(2)")
        #expect(error?.name == "NameError")
        #expect(sink.stdout == "1\n")
    }

    @Test("cancelling the cell's task interrupts sleep at once")
    func interruptSleep() async {
        let interpreter = Interpreter()
        let sink = RecordingSink()
        let task = Task {
            try await interpreter.execute(ExecutionRequest(code: "print(1)\nsleep(60)\nprint(2)", executionCount: 1), output: sink)
        }
        while sink.stdout.isEmpty { await Task.yield() }
        task.cancel()
        let result = await task.result
        #expect(throws: ExecutionError.interrupted) { try result.get() }
        #expect(sink.stdout == "1\n")
        #expect(await run("print(3)", on: interpreter).1 == nil)
    }

    @Test("input() asks the front end, or fails clearly when it cannot")
    func input() async {
        let (sink, error) = await run(#"print(input("name? "))"#, sink: RecordingSink(inputs: ["Ada"]))
        #expect(error == nil && sink.stdout == "Ada\n")
        let refused = await run(#"input("name? ")"#).1
        #expect(refused?.name == "InputError")
        #expect(refused?.message == "input() is not available: no stdin in this test")
    }
}

@Suite("Questions about code")
struct IntrospectionTests {
    @Test("completion offers names and keywords by prefix with the replaced range")
    func completion() async {
        let interpreter = Interpreter()
        let completion = await interpreter.complete("x = pri", cursor: 7)
        #expect(completion.matches == ["print"])
        #expect((completion.start, completion.end) == (4, 7))
        #expect(await interpreter.complete("e", cursor: 1).matches == ["einsum", "else", "env", "eprint", "exp", "expandDims"])
        #expect(await interpreter.complete("😀 sl", cursor: 4).start == 2)
    }

    @Test("completion offers names declared earlier in the cell being edited, before it has run")
    func completionOfNamesInTheCell() async {
        let interpreter = Interpreter()
        let cell = "let zebraCount = 3\nfunc zebraTwice(x) { return 2 * x }\nfor zebraIndex in 0..<2 { }\nzebra"
        let completion = await interpreter.complete(cell, cursor: cell.unicodeScalars.count)
        #expect(completion.matches == ["zebraCount", "zebraIndex", "zebraTwice"])
        #expect(await interpreter.complete("zebra", cursor: 5).matches.isEmpty)
    }

    @Test("inspection shows a built-in's signature and summary")
    func inspection() async {
        let interpreter = Interpreter()
        let bundle = await interpreter.inspect("sleep(", cursor: 6, detailLevel: 0)
        #expect(bundle?.plainText?.hasPrefix("sleep(_ seconds: Double)") == true)
        #expect(bundle?.data["text/markdown"]?.contains("```swift") == true)
        #expect(await interpreter.inspect("nothing_here", cursor: 3, detailLevel: 0) == nil)
    }

    @Test("completeness: open brackets need more, broken code is invalid")
    func completeness() async {
        let interpreter = Interpreter()
        #expect(await interpreter.completeness(of: "print(1)") == .complete)
        #expect(await interpreter.completeness(of: "print(1,") == .incomplete(indent: ""))
        #expect(await interpreter.completeness(of: "/* note") == .incomplete(indent: ""))
        #expect(await interpreter.completeness(of: "let s = \"\"\"") == .incomplete(indent: ""))
        #expect(await interpreter.completeness(of: "let s = \"\"\"\n  text") == .incomplete(indent: ""))
        #expect(await interpreter.completeness(of: "let s = \"\"\" x") == .invalid)
        #expect(await interpreter.completeness(of: "print(1))") == .invalid)
        #expect(await interpreter.completeness(of: "") == .complete)
    }

    @Test("completeness of help requests and magics: `sleep?` runs at once, `%%time` waits for a blank line")
    func completenessOfHelpAndMagics() async {
        let interpreter = Interpreter()
        #expect(await interpreter.completeness(of: "sleep?") == .complete)
        #expect(await interpreter.completeness(of: "sleep??") == .complete)
        #expect(await interpreter.completeness(of: "%who") == .complete)
        #expect(await interpreter.completeness(of: "%%time") == .incomplete(indent: ""))
        #expect(await interpreter.completeness(of: "%%time\nsleep(0.1)") == .incomplete(indent: ""))
        #expect(await interpreter.completeness(of: "%%time\nsleep(0.1)\n") == .complete)
    }

    @Test("history: tail, range and glob search with unique (the latest of each input kept)")
    func history() async throws {
        let interpreter = Interpreter()
        for (count, code) in ["print(1)", "print(2)", "print(1)", "3"].enumerated() {
            try await interpreter.execute(ExecutionRequest(code: code, executionCount: count + 1), output: RecordingSink())
        }
        try await interpreter.execute(ExecutionRequest(code: "9", executionCount: 4, storeHistory: false), output: RecordingSink())
        #expect(await interpreter.history(.tail(count: 2)).map(\.input) == ["print(1)", "3"])
        #expect(await interpreter.history(.range(session: 0, start: 2, stop: 4)).map(\.line) == [2, 3])
        #expect(await interpreter.history(.search(pattern: "print*", count: nil, unique: true)).map(\.line) == [2, 3])
        #expect(await interpreter.history(.search(pattern: "print*", count: 1, unique: false)).map(\.line) == [3])
    }
}

@Suite("Persistent history")
struct PersistentHistoryTests {
    @Test("history attached after cells ran keeps those cells too")
    func attachLater() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lumen-history-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let interpreter = Interpreter()
        try await interpreter.execute(ExecutionRequest(code: "1 + 1", executionCount: 1), output: RecordingSink())
        let store = try HistoryStore(path: path)
        await interpreter.attachHistory(store)
        await store.flush()
        #expect(try HistoryStore(path: path).earlierEntries.map(\.input) == ["1 + 1"])
        #expect(await interpreter.history(.range(session: 0, start: 0, stop: nil)).map(\.session) == [store.session])
    }

    @Test("a new session sees earlier sessions' inputs; range 0 and -1 pick sessions")
    func acrossSessions() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lumen-history-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let firstStore = try HistoryStore(path: path)
        let first = Interpreter(history: firstStore)
        try await first.execute(ExecutionRequest(code: "print(\"first\")", executionCount: 1), output: RecordingSink())
        try await first.execute(ExecutionRequest(code: "1 + 1", executionCount: 2), output: RecordingSink())
        await firstStore.flush()
        let second = Interpreter(history: try HistoryStore(path: path))
        try await second.execute(ExecutionRequest(code: "3", executionCount: 1), output: RecordingSink())
        #expect(await second.history(.tail(count: 3)).map(\.input) == ["print(\"first\")", "1 + 1", "3"])
        #expect(await second.history(.range(session: -1, start: 0, stop: nil)).map(\.line) == [1, 2])
        #expect(await second.history(.search(pattern: "print*", count: nil, unique: false)).map(\.input) == ["print(\"first\")"])
        #expect(await second.history(.range(session: 0, start: 0, stop: nil)).map(\.input) == ["3"])
    }
}

import Evaluation
import LanguageTestSupport
import OrderedJSON
import Testing
@testable import LumenLanguage

/// Collects a debugger's events in order, to be awaited one at a time.
private final class EventQueue: DebugEventSink {
    let events: AsyncStream<DebugEvent>
    private let continuation: AsyncStream<DebugEvent>.Continuation

    init() {
        (events, continuation) = AsyncStream.makeStream()
    }

    func publish(_ event: DebugEvent) {
        continuation.yield(event)
    }

    /// The next event named `name` (others before it are passed over).
    func next(_ name: String, in iterator: inout AsyncStream<DebugEvent>.Iterator) async -> DebugEvent? {
        while let event = await iterator.next() {
            if event.event == name { return event }
        }
        return nil
    }
}

@Suite("Debugger")
struct DebuggerTests {
    /// ipykernel's own `murmur2_x86(text, get_tmp_hash_seed())` (ipykernel 7.4, `ipykernel.compiler`)
    /// printed these; JupyterLab names a cell by the same hash.
    @Test("a cell's source is named by the Murmur2 hash ipykernel and JupyterLab compute")
    func murmur2MatchesIPykernel() {
        let expected: [(String, UInt32)] = [
            ("", 3_990_065_800), ("a", 2_167_009_006), ("ab", 2_805_137_849), ("abc", 3_350_977_461), ("abcd", 804_720_481),
            ("abcde", 730_143_326), ("let x = 1", 719_486_033),
            ("var total = 0\nfor i in 0..<3 {\n    total += i\n}\ntotal", 4_154_304_754), ("print(\"héllo ✓ 😀\")", 2_252_143_228),
        ]
        for (text, hash) in expected {
            #expect(Murmur2.hash(text, seed: Debugger.hashSeed) == hash, "\(text.debugDescription)")
        }
    }

    @Test("breakpoints verify on the lines where a statement starts, inside blocks, functions and closures")
    func statementLines() throws {
        let code = """
            let a = 1 +
                2
            func f(x) {
                if x > 1 {
                    return x
                }
                return 0
            }

            let b = [1, 2].map { y in
                y * 2
            }
            """
        #expect(Statement.lines(of: try Parser.parse(code)) == [1, 3, 4, 5, 7, 10, 11])
    }

    @Test("a breakpoint inside a closure a built-in calls stops there each time, with the cell beneath it on the stack")
    func breakpointInsideACallback() async throws {
        let interpreter = Interpreter()
        let events = EventQueue()
        var iterator = events.events.makeAsyncIterator()
        let code = "let doubled = [1, 2].map { x in\n    x * 2\n}\ndoubled"
        var sequence = 0
        func request(_ command: String, _ arguments: OrderedJSON = [:]) async -> DebugResponse {
            sequence += 1
            return await interpreter.debug(DebugRequest(seq: sequence, command: command, arguments: arguments), events: events)
        }
        #expect(await request("initialize").success)
        let path = try #require(await request("dumpCell", ["code": .string(code)]).body["sourcePath"]?.stringValue)
        let placed = await request("setBreakpoints", ["source": ["path": .string(path)], "breakpoints": [["line": 2]]])
        #expect(placed.body["breakpoints"] == [["id": 1, "verified": true, "line": 2, "source": ["path": .string(path)]]])

        let sink = RecordingSink()
        let cell = Task { try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: sink) }
        for element in 1...2 {
            let stopped = try #require(await events.next("stopped", in: &iterator))
            let thread = try #require(stopped.body["threadId"]?.integerValue)
            let trace = await request("stackTrace", ["threadId": .integer(thread)])
            guard case .array(let frames)? = trace.body["stackFrames"] else { Issue.record("no frames: \(trace)"); return }
            #expect(frames.map { $0["name"]?.stringValue } == ["closure", "Cell In[1]"])
            #expect(frames.map { $0["line"]?.integerValue } == [2, 1])
            let frame = try #require(frames.first?["id"])
            let x = await request("evaluate", ["expression": "x", "frameId": frame])
            #expect(x.body["result"] == .string(String(element)))
            #expect(await request("continue", ["threadId": .integer(thread)]).success)
        }
        try await cell.value
        #expect(sink.events.contains(.result(.plainText("[2, 4]"))))
    }

    @Test("a started debugger with nothing set leaves a cell's output as it was")
    func startedWithoutBreakpoints() async throws {
        let code = "var s = 0\nfor i in 0..<50 { s += i }\nprint(s)\ns"
        let plain = RecordingSink()
        try await Interpreter().execute(ExecutionRequest(code: code, executionCount: 1), output: plain)
        let interpreter = Interpreter()
        _ = await interpreter.debug(DebugRequest(seq: 1, command: "initialize"), events: EventQueue())
        let debugged = RecordingSink()
        try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: debugged)
        #expect(debugged.events == plain.events)
        #expect(plain.events.contains(.result(.plainText("1225"))))
    }
}

@Suite("Debugger variables")
struct DebuggerVariableTests {
    /// Runs `code` with the debugger started, then lists the globals as `inspectVariables` does
    /// and expands `name` (with `arguments` added to the `variables` request).
    private func expand(_ name: String, after code: String, _ arguments: [(String, OrderedJSON)] = []) async throws -> [OrderedJSON] {
        let interpreter = Interpreter()
        let events = EventQueue()
        _ = await interpreter.debug(DebugRequest(seq: 1, command: "initialize"), events: events)
        try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: RecordingSink())
        let listed = await interpreter.debug(DebugRequest(seq: 2, command: "inspectVariables"), events: events)
        guard case .array(let variables)? = listed.body["variables"],
              let variable = variables.first(where: { $0["name"] == .string(name) }),
              let reference = variable["variablesReference"]?.integerValue, reference > 0 else {
            Issue.record("'\(name)' does not expand: \(listed.body.text)")
            return []
        }
        let request = DebugRequest(seq: 3, command: "variables",
                                   arguments: .object([(key: "variablesReference", value: .integer(reference))] + arguments.map { (key: $0.0, value: $0.1) }))
        guard case .array(let children)? = await interpreter.debug(request, events: events).body["variables"] else { return [] }
        return children
    }

    @Test("arrays expand into their elements, a page at a time when asked; dictionaries into their entries")
    func collections() async throws {
        let elements = try await expand("a", after: "let a = [10, 20, 30, 40]")
        #expect(elements.map { $0["name"]?.stringValue } == ["0", "1", "2", "3"])
        #expect(elements.map { $0["value"]?.stringValue } == ["10", "20", "30", "40"])
        let page = try await expand("a", after: "let a = [10, 20, 30, 40]", [("start", 1), ("count", 2)])
        #expect(page.map { $0["value"]?.stringValue } == ["20", "30"])
        let entries = try await expand("d", after: #"let d = ["x": 1, "y": [2, 3]]"#)
        #expect(entries.map { $0["name"]?.stringValue } == [#""x""#, #""y""#])
        #expect(entries[1]["type"] == "Array" && entries[1]["variablesReference"]?.integerValue ?? 0 > 0)
    }

    @Test("a tensor lists its shape and first values, and expands into its properties")
    func tensor() async throws {
        let interpreter = Interpreter()
        let events = EventQueue()
        _ = await interpreter.debug(DebugRequest(seq: 1, command: "initialize"), events: events)
        try await interpreter.execute(ExecutionRequest(code: "let t = tensor([[1.5, 2, 3], [4, 5, 6]])", executionCount: 1), output: RecordingSink())
        let listed = await interpreter.debug(DebugRequest(seq: 2, command: "inspectVariables"), events: events)
        guard case .array(let variables)? = listed.body["variables"], let t = variables.first(where: { $0["name"] == "t" }) else {
            Issue.record("no t: \(listed.body.text)")
            return
        }
        #expect(t["value"]?.stringValue?.hasPrefix("Tensor [2 × 3]") == true)
        #expect(t["value"]?.stringValue?.contains("1.5  2  3") == true)
        let properties = try await expand("t", after: "let t = tensor([[1.5, 2, 3], [4, 5, 6]])")
        #expect(properties.first { $0["name"] == "shape" }?["value"] == "[2, 3]")
    }

    @Test("richInspectVariables gives a value's display bundle: a table's HTML beside its text")
    func richInspection() async throws {
        let interpreter = Interpreter()
        try await interpreter.execute(ExecutionRequest(code: #"let rows = table([["a": 1], ["a": 2]])"#, executionCount: 1), output: RecordingSink())
        let response = await interpreter.debug(DebugRequest(seq: 1, command: "richInspectVariables", arguments: ["variableName": "rows"]),
                                               events: EventQueue())
        #expect(response.success)
        #expect(response.body["data"]?["text/html"]?.stringValue?.contains("<table") == true)
        #expect(response.body["data"]?["text/plain"] != nil)
        let missing = await interpreter.debug(DebugRequest(seq: 2, command: "richInspectVariables", arguments: ["variableName": "nothing"]),
                                              events: EventQueue())
        #expect(!missing.success && missing.message?.contains("nothing") == true)
    }
}

import Evaluation
import LanguageTestSupport
import Synchronization
import Testing
@testable import LumenLanguage

/// A host object with one settable property, `level`, that takes Ints from 0 to 10 and counts its
/// sets; `origin` reports the running cell's execution count.
private final class Dial: SettableHostObject {
    let level = Mutex(0)
    var typeName: String { "Dial" }
    var summary: String { "Dial(\(level.withLock { $0 }))" }
    var mimeBundle: MIMEBundle { .plainText(summary) }
    var settablePropertyNames: [String] { ["level"] }
    var members: HostMembers {
        HostMembers(properties: ["level"]) { name in name == "level" ? .integer(self.level.withLock { $0 }) : nil }
    }
    func setProperty(_ name: String, to value: Value, context: Builtin.Context) async throws {
        guard case .integer(let new) = value, (0...10).contains(new) else {
            throw LumenError(.value, "a Dial's level is an Int from 0 to 10", at: context.location)
        }
        level.withLock { $0 = new }
        context.output.comm(CommMessage(.message, commID: "dial", data: #"{"level":\#(new)}"#))
    }
}

/// An endpoint that records what reaches it and calls the function a cell registered.
private final class Listener: CommEndpoint {
    let received = Mutex<[CommMessage]>([])
    let handler: Value
    init(handler: Value) { self.handler = handler }
    func receive(_ message: CommMessage, context: Builtin.Context) async {
        received.withLock { $0.append(message) }
        _ = try? await context.call(handler, [.string(message.data)])
    }
}

private final class DialLibrary: LumenLibrary {
    let listeners = Mutex<[Listener]>([])
    let builtins: [Builtin] = [
        Builtin(name: "dial", signature: "dial()", summary: "A dial.") { arguments, _ in
            try arguments.finish()
            return .host(Dial())
        },
        Builtin(name: "cellCount", signature: "cellCount()", summary: "The running cell's execution count.") { arguments, context in
            try arguments.finish()
            return .integer(context.cell.executionCount)
        },
        Builtin(name: "listen", signature: "listen(_ id: String, _ handler)", summary: "Opens comm `id`.") { arguments, context in
            let id = try arguments.string(try arguments.requirePositional("id"), "id")
            let handler = try arguments.requirePositional("handler").0
            try arguments.finish()
            let listener = Listener(handler: handler)
            try context.library(DialLibrary.self).listeners.withLock { $0.append(listener) }
            context.openComm(listener, id: id, target: "test.target", data: "{}")
            return .null
        },
    ]
}

/// A sink whose input requests wait until the test answers them, announcing each as it starts.
private final class GatedSink: OutputSink {
    let recording = RecordingSink()
    let asked: AsyncStream<Void>
    private let askedContinuation: AsyncStream<Void>.Continuation
    let answers: AsyncStream<String>
    let answer: AsyncStream<String>.Continuation

    init() {
        (asked, askedContinuation) = AsyncStream.makeStream(of: Void.self)
        (answers, answer) = AsyncStream.makeStream(of: String.self)
    }

    func stream(_ stream: StandardStream, _ text: String) { recording.stream(stream, text) }
    func display(_ bundle: MIMEBundle, displayID: String?) { recording.display(bundle, displayID: displayID) }
    func updateDisplay(_ bundle: MIMEBundle, displayID: String) { recording.updateDisplay(bundle, displayID: displayID) }
    func progress(_ bundle: MIMEBundle, id: String, finished: Bool) { recording.progress(bundle, id: id, finished: finished) }
    func clearOutput(wait: Bool) { recording.clearOutput(wait: wait) }
    func executeResult(_ bundle: MIMEBundle) { recording.executeResult(bundle) }
    func error(_ error: ExecutionError) { recording.error(error) }
    func page(_ bundle: MIMEBundle) { recording.page(bundle) }

    func requestInput(prompt: String, password: Bool) async throws -> String {
        askedContinuation.yield()
        var iterator = answers.makeAsyncIterator()
        return await iterator.next() ?? ""
    }
}

@Suite("Cells at once, settable properties and comms")
struct ConcurrentCellTests {
    @Test("cells running at once (a subshell's beside the main shell's) each see their own origin")
    func cellsKeepTheirOwnOrigin() async throws {
        let interpreter = Interpreter(libraries: [DialLibrary()])
        let waiting = GatedSink()
        // Cell 1 waits in input() while cell 2 runs entirely, then reads its own count.
        let first = Task {
            try await interpreter.execute(ExecutionRequest(code: "let answer = input(\"?\")\nprint(cellCount())", executionCount: 1), output: waiting)
        }
        var asked = waiting.asked.makeAsyncIterator()
        _ = await asked.next()
        let beside = RecordingSink()
        try await interpreter.execute(ExecutionRequest(code: "print(cellCount())", executionCount: 2), output: beside)
        waiting.answer.yield("go")
        try await first.value
        #expect(beside.stdout == "2\n")
        #expect(waiting.recording.stdout == "1\n")
    }

    @Test("a settable property takes a value through its object; others are TypeErrors naming the property and the type")
    func settableProperties() async {
        let session = Session(libraries: [DialLibrary()])
        #expect(await session.run("let d = dial()\nd.level = 7\nd.level") == "7")
        #expect(await session.run("d.level = 11") == "ValueError: a Dial's level is an Int from 0 to 10")
        #expect(await session.run("d.volume = 1") == "TypeError: cannot assign to property 'volume' of Dial")
        #expect(await session.run("var n = 3\nn.level = 1") == "TypeError: cannot assign to property 'level' of Int")
        #expect(await session.run("d.level") == "7")
    }

    @Test("a comm the session opened gets the front end's messages and calls back into Lumen; unknown comms are refused as ipykernel does")
    func commsReachTheirEndpoint() async throws {
        let library = DialLibrary()
        let interpreter = Interpreter(libraries: [library])
        let cell = RecordingSink(showsWidgets: true)
        try await interpreter.execute(ExecutionRequest(code: "var got = []\nlisten(\"c1\", { data in got.append(data) })", executionCount: 1),
                                      output: cell)
        #expect(cell.comms == [CommMessage(.open(target: "test.target"), commID: "c1")])
        #expect(await interpreter.openComms(target: nil) == ["c1": "test.target"])
        #expect(await interpreter.openComms(target: "other").isEmpty)
        let front = RecordingSink(showsWidgets: true)
        await interpreter.receive(CommMessage(.message, commID: "c1", data: #"{"x":1}"#), output: front)
        let check = RecordingSink()
        try await interpreter.execute(ExecutionRequest(code: "got", executionCount: 2), output: check)
        #expect(check.results == [#"["{\"x\":1}"]"#])
        await interpreter.receive(CommMessage(.close, commID: "c1"), output: front)
        #expect(await interpreter.openComms(target: nil).isEmpty)
        let unknown = RecordingSink(showsWidgets: true)
        await interpreter.receive(CommMessage(.message, commID: "c1"), output: unknown)
        await interpreter.receive(CommMessage(.open(target: "nothing"), commID: "c2"), output: unknown)
        #expect(unknown.events == [.stream(.stderr, "No such comm: c1\n"), .stream(.stderr, "No such comm target registered: nothing\n"),
                                   .comm(CommMessage(.close, commID: "c2"))])
        #expect(library.listeners.withLock { $0.first?.received.withLock { $0.count } } == 2)
    }
}

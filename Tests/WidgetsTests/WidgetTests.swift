import Evaluation
import LanguageTestSupport
import LumenLanguage
import OrderedJSON
import Testing
@testable import Widgets

/// Widgets as cells use them, through an interpreter with the widget library, its comm messages
/// recorded. (Their states and message sequences are checked against ipywidgets itself in
/// Tests/integration/test_widgets.py; here, what a cell is told when it gets them wrong.)
@Suite("Widgets in cells")
struct WidgetTests {
    let interpreter = Interpreter(libraries: [WidgetLibrary()])

    /// Runs `code` in a front end with widgets: its result or error, and the comms it sent.
    func run(_ code: String) async -> (shown: String, comms: [CommMessage]) {
        let sink = RecordingSink(showsWidgets: true)
        do {
            try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: sink)
            return (sink.stdout + (sink.results.last ?? ""), sink.comms)
        } catch {
            return ("\(error.name): \(error.message)", sink.comms)
        }
    }

    /// The `state` of the last `update` among `comms`.
    func lastUpdate(_ comms: [CommMessage]) throws -> OrderedJSON? {
        try comms.last { $0.kind == .message }.map { try OrderedJSON(parsing: $0.data) }?["state"]
    }

    @Test("a property of the wrong type, an unknown label, a choice not offered: each error names the widget, the property and what it takes")
    func mistakesAreNamed() async {
        #expect(await run(#"IntSlider(value: "a")"#).shown == "TypeError: IntSlider's value must be an Int, not String")
        #expect(await run("IntSlider(valu: 3)").shown == "TypeError: IntSlider() has no argument labelled 'valu:' (did you mean 'value:'?)")
        #expect(await run(#"Button(buttonStyle: "loud")"#).shown
            == #"TypeError: Button's buttonStyle must be one of "primary", "success", "info", "warning", "danger", "", not String"#)
        #expect(await run(#"Dropdown(options: ["a", "b"], value: "z")"#).shown == #"ValueError: "z" is not one of the Dropdown's options"#)
        #expect(await run("HBox([1, 2])").shown == "TypeError: HBox's children must be an array of widgets, not an array holding Int")
        #expect(await run("let s = IntSlider()\ns.onClick { b in 1 }").shown.hasPrefix("TypeError: a IntSlider has no member 'onClick'"))
        #expect(await run("interact({ x in x })").shown.hasPrefix("TypeError: interact() needs at least one labelled value"))
    }

    @Test("a value set in a cell is kept within min and max and sent as one update; an observer sees the change once")
    func setsAreClampedAndObserved() async throws {
        _ = await run("var seen = []\nlet s = IntSlider(value: 4, max: 8)\ns.observe { c in seen.append([c[\"old\"], c[\"new\"]]) }")
        let (shown, comms) = await run("s.value = 20\ns.value")
        #expect(shown == "8")
        #expect(try lastUpdate(comms) == OrderedJSON(parsing: #"{"value":8}"#))
        #expect(await run("seen").shown == "[[4, 8]]")
        let (_, unchanged) = await run("s.value = 8")
        #expect(unchanged.isEmpty, "setting the value it has sends nothing")
    }

    @Test("an Output widget's text merges streams of one name and applies carriage returns as Jupyter front ends do")
    func outputText() async throws {
        _ = await run("let o = Output()")
        _ = await run(#"o.appendStdout("loading 10%\r")"#)
        let (_, comms) = await run(#"o.appendStdout("loading 100%\ndone\n")"#)
        #expect(try lastUpdate(comms)?["outputs"] == OrderedJSON(parsing: #"[{"output_type":"stream","name":"stdout","text":"loading 100%\ndone\n"}]"#))
        let (_, cleared) = await run("o.clearOutput()")
        #expect(try lastUpdate(cleared)?["outputs"] == .array([]))
    }

    @Test("outside a front end with widgets, interact runs its function once with the initial values")
    func interactWithoutWidgets() async {
        let session = Session(libraries: [WidgetLibrary()])
        #expect(await session.run(#"interact({ a, b, w in "\(a) \(b) \(w)" }, a: 2, b: ["x", "y"], w: 0..<10)"#) == #""2 x 4""#)
    }
}

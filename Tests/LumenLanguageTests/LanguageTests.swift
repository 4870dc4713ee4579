import Evaluation
import LanguageTestSupport
import Testing
@testable import LumenLanguage

@Suite("Language semantics")
struct LanguageTests {
    @Test("arithmetic follows Swift: precedence, Int division, mixing with Double")
    func arithmetic() async {
        let session = Session()
        #expect(await session.run("1 + 2 * 3") == "7")
        #expect(await session.run("(1 + 2) * 3 - -1") == "10")
        #expect(await session.run("7 / 2") == "3")
        #expect(await session.run("7.0 / 2") == "3.5")
        #expect(await session.run("-7 % 3") == "-1")
        #expect(await session.run("1 + 2.5") == "3.5")
        #expect(await session.run("9223372036854775807 + 1") == "ValueError: integer overflow in 9223372036854775807 + 1")
        #expect(await session.run("1 / 0") == "ValueError: division by zero")
        #expect(await session.run("\"a\" - 1") == "TypeError: '-' cannot be applied to String and Int")
    }

    @Test("comparisons, logic, ternary and nil coalescing")
    func logic() async {
        let session = Session()
        #expect(await session.run("1 < 2 && \"a\" < \"b\" || false") == "true")
        #expect(await session.run("!(1 == 1.0)") == "false")
        #expect(await session.run("3 > 2 ? \"yes\" : \"no\"") == "\"yes\"")
        #expect(await session.run("nil ?? 5") == "5")
        #expect(await session.run("false && undefined_name") == "false")
        #expect(await session.run("1 && true") == "TypeError: a condition must be a Bool, not Int")
    }

    @Test("let, var, scopes and assignment")
    func variables() async {
        let session = Session()
        #expect(await session.run("let x = 2\nvar y = x\ny += 3\ny *= 2\ny") == "10")
        #expect(await session.run("x = 5") == "TypeError: cannot assign to 'x': it is a 'let' constant")
        #expect(await session.run("z = 1") == "NameError: 'z' is not defined (declare it with 'var')")
        #expect(await session.run("if true { let inner = 1 }\ninner") == "NameError: 'inner' is not defined")
        #expect(await session.run("y") == "10")
    }

    @Test("print shows a tensor's values as NumPy prints them, columns aligned, cut to a screen; a range makes a tensor as arange")
    func printedTensors() async {
        let session = Session()
        #expect(await session.run("print(tensor([[1.5, 2, 3], [4, 5, 6.25]]))") == "Tensor [2 × 3] (axis0 × axis1)\n0: 1.5  2     3\n1:   4  5  6.25\n")
        #expect(await session.run("print(tensor(range(30)))") == "Tensor [30] (axis0)\n0  1  2  3  4  5  …  27  28  29\n")
        let blocks = await session.run("print(reshape(tensor(range(40)), [5, 2, 4]))")
        #expect(blocks.hasPrefix("Tensor [5 × 2 × 4] (axis0 × axis1 × axis2)\naxis0 0:\n  0: 0  1  2  3\n  1: 4  5  6  7\naxis0 1:\n"))
        #expect(blocks.contains("…\naxis0 4:\n  0: 32  33  34  35\n  1: 36  37  38  39\nmean 19.5, min 0, max 39, norm 143.3\n"))
        #expect(await session.run("tensor(range(5, 5))") == "TypeError: needs a Tensor or a non-empty array of numbers, got Range")
    }

    @Test("strings: interpolation, multi-line literals, methods")
    func strings() async {
        let session = Session()
        #expect(await session.run(#"let n = 3; "\(n) apples, \(n * 2) pears""#) == #""3 apples, 6 pears""#)
        #expect(await session.run("let poem = \"\"\"\n    roses\n      are \\(\"red\")\n    \"\"\"\nprint(poem)") == "roses\n  are red\n")
        #expect(await session.run(#""a b  c".split(" ").joined(separator: "-")"#) == #""a-b-c""#)
        #expect(await session.run(#"" Hi ".trimmed().uppercased() + "!".replacing("!", with: "?")"#) == #""HI?""#)
        #expect(await session.run(#""lumen".hasPrefix("lu") && "lumen".contains("me") && "lumen".count == 5"#) == "true")
        #expect(await session.run(#""abc"[1]"#) == #""b""#)
    }

    @Test("loops: ranges, arrays, pairs, break and continue")
    func loops() async {
        let session = Session()
        #expect(await session.run("var total = 0\nfor i in 0..<5 { total += i }\ntotal") == "10")
        #expect(await session.run("var s = 0\nfor i in 1...10 {\n if i % 2 == 0 { continue }\n if i > 7 { break }\n s += i\n}\ns") == "16")
        #expect(await session.run("var n = 0\nwhile n < 100 { n += 7 }\nn") == "105")
        #expect(await session.run("for (i, w) in [\"a\", \"b\"].enumerated() { print(i, w) }") == "0 a\n1 b\n")
        #expect(await session.run("for (k, v) in [\"x\": 1] { print(k, v) }") == "x 1\n")
        #expect(await session.run("break") == "SyntaxError: 'break' outside of a loop")
        // A range's integers are made as the loop reaches them: this one's whole would not fit in memory.
        #expect(await session.run("var last = 0\nfor i in 0..<100000000000000 { last = i\n if i == 3 { break } }\nlast") == "3")
        #expect(await session.run("(-9223372036854775807 - 1)..<1")
                == "ValueError: the range -9223372036854775808..<1 holds more integers than an Int counts")
        #expect(await session.run("range(-9223372036854775807 - 1, 1).count")
                == "ValueError: range(-9223372036854775808, 1) holds more integers than an Int counts")
        // Made into a list, a range is capped.
        #expect(await session.run("(0..<100000000000000).map { $0 * 2 }.count")
                == "ValueError: the range 0..<100000000000000 has more than the 16777216 integers one list may hold; for … in takes them one at a time")
    }

    @Test("functions: labels, defaults, recursion, early return, closures and $0")
    func functions() async {
        let session = Session()
        #expect(await session.run("func fib(n) { if n < 2 { return n }\n return fib(n - 1) + fib(n - 2) }\nfib(15)") == "610")
        #expect(await session.run("func scale(x, by: factor = 2) { return x * factor }\nscale(3) + scale(3, by: 10)") == "36")
        #expect(await session.run("scale()") == "TypeError: scale() is missing its argument 'x'")
        #expect(await session.run("scale(1, with: 2)") == "TypeError: scale() has no argument labelled 'with:'")
        #expect(await session.run("func counter() { var c = 0\n return { c += 1\n return c } }\nlet next = counter()\nnext(); next()") == "2")
        #expect(await session.run("[1, 2, 3].map { $0 * $0 }") == "[1, 4, 9]")
        #expect(await session.run("[1, 2, 3, 4].filter { x in x % 2 == 0 }.reduce(0) { $0 + $1 }") == "6")
        #expect(await session.run("func forever(n) { return forever(n + 1) }\nforever(0)").hasPrefix("ValueError: calls nested more than"))
    }

    @Test("arrays and dictionaries are values; subscripts check bounds")
    func collections() async {
        let session = Session()
        #expect(await session.run("var a = [1, 2]\nlet b = a\na.append(3)\na[0] = 9\n[a, b]") == "[[9, 2, 3], [1, 2]]")
        #expect(await session.run("a[5]") == "IndexError: index 5 is out of range for an array of 3")
        #expect(await session.run("a[1..<3]") == "[2, 3]")
        #expect(await session.run("var grid = [[0, 0], [0, 0]]\ngrid[1][0] = 5\ngrid") == "[[0, 0], [5, 0]]")
        #expect(await session.run("var d = [\"b\": 2, \"a\": 1]\nd[\"c\"] = 3\nd[\"b\"] = nil\n[d.keys, d[\"zz\"] ?? 0]") == "[[\"a\", \"c\"], 0]")
        #expect(await session.run("[1, 2].count + [:].count + \"xy\".count + len(0..<4)") == "8")
        #expect(await session.run("[3, 1, 2].sorted() + sorted([3, 1, 2]) { $0 > $1 }") == "[1, 2, 3, 3, 2, 1]")
        #expect(await session.run("[1, 2].zip([\"a\", \"b\"])") == "[[1, \"a\"], [2, \"b\"]]")
        #expect(await session.run("[1].nope") == "TypeError: a Array has no member 'nope': it has append, contains, count, enumerated, filter, first, firstIndex, insert, isEmpty, joined, last, map, max, min, reduce, remove, removeAll, removeLast, reversed, sorted, zip")
    }

    @Test("standard library numbers and conversions")
    func standardLibrary() async {
        let session = Session()
        #expect(await session.run("[sum([1, 2, 3]), min(4, 2, 8), max([1.5, 0.5])]") == "[6, 2, 1.5]")
        #expect(await session.run("[mean([1, 2, 3, 4]), stdev([2, 4, 4, 4, 5, 5, 7, 9])]") == "[2.5, 2.138089935299395]")
        #expect(await session.run("[abs(-3), round(2.5), sqrt(16), pow(2, 10), exp(0), log(1)]") == "[3, 3.0, 4.0, 1024.0, 1.0, 0.0]")
        #expect(await session.run("[Int(\"42\"), Int(3.9), Double(\"x\"), String(7) + \"!\"]") == "[42, 3, nil, \"7!\"]")
        #expect(await session.run("range(3).map { $0 * 10 } + stride(from: 0, to: 10, by: 4)") == "[0, 10, 20, 0, 4, 8]")
        #expect(await session.run("assert(1 + 1 == 3, \"math is broken\")") == "AssertionError: math is broken")
        #expect(await session.run("let r = random(seed: 7); [r == random(seed: 7), r >= 0 && r < 1]") == "[true, true]")
        #expect(await session.run("(0..<200).map { random(in: 1...6) }.filter { $0 < 1 || $0 > 6 }.count") == "0")
        #expect(await session.run("random(in: 3..<3)") == "ValueError: random(in:) needs a non-empty Int range, got 3..<3")
    }

    @Test("an endless loop is interrupted by cancelling its task")
    func cancelLoop() async {
        let interpreter = Interpreter()
        let sink = RecordingSink()
        let task = Task {
            try await interpreter.execute(ExecutionRequest(code: "print(\"go\")\nvar i = 0\nwhile true { i += 1 }", executionCount: 1), output: sink)
        }
        while sink.stdout.isEmpty { await Task.yield() }
        task.cancel()
        await #expect(throws: ExecutionError.interrupted) { try await task.value }
    }

    @Test("completeness of blocks and multi-line strings")
    func completeness() async {
        let interpreter = Interpreter()
        #expect(await interpreter.completeness(of: "for i in 0..<3 {") == .incomplete(indent: "    "))
        #expect(await interpreter.completeness(of: "let s = \"\"\"\nabc") == .incomplete(indent: ""))
        #expect(await interpreter.completeness(of: "let x = 1 +") == .incomplete(indent: ""))
        #expect(await interpreter.completeness(of: "let = 3") == .invalid)
    }
}

@Suite("Display, magics and help")
struct RichOutputTests {
    @Test("tables render as HTML and aligned text; arrays of dictionaries are tables")
    func tables() async throws {
        let interpreter = Interpreter()
        let sink = RecordingSink()
        try await interpreter.execute(ExecutionRequest(code: #"[["model": "a", "tok/s": 12.5], ["model": "bb", "tok/s": 3]]"#, executionCount: 1), output: sink)
        guard case .result(let bundle)? = sink.events.last else { Issue.record("no result"); return }
        #expect(bundle.data["text/plain"] == "model  tok/s\n-----  -----\na      12.5\nbb     3")
        #expect(bundle.data["text/html"]?.contains("<th>tok/s</th>") == true)
    }

    @Test("charts render as SVG with a text fallback; display ids update")
    func chartsAndUpdates() async throws {
        let interpreter = Interpreter()
        let sink = RecordingSink()
        let code = #"display(chart([3, 1], labels: ["x", "y"], title: "T"), id: "c")"# + "\nupdate(html(\"<i>done</i>\"), id: \"c\")\nclear(wait: true)"
        try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: sink)
        guard case .display(let chart, "c")? = sink.events.first else { Issue.record("no display"); return }
        #expect(chart.data["image/svg+xml"]?.hasPrefix("<svg") == true)
        #expect(chart.data["text/plain"] == "T\nx ████████████████████████████████████████ 3\ny █████████████ 1")
        #expect(sink.events.dropFirst().first == .update(MIMEBundle(["text/html": "<i>done</i>", "text/plain": "done"]), "c"))
        #expect(sink.events.last == .clear(true))
    }

    @Test("json renders application/json; functions have no JSON form")
    func json() async {
        let session = Session()
        #expect(await session.run(#"json(["a": [1, 2.5, nil]])"#) == #"{"a":[1,2.5,null]}"#)
        #expect(await session.run("json(print)") == "ValueError: a Function has no JSON form")
    }

    @Test("help and name? page the documentation")
    func help() async throws {
        let interpreter = Interpreter()
        for code in ["help(sleep)", "sleep?"] {
            let sink = RecordingSink()
            try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: sink)
            guard case .page(let bundle)? = sink.events.first else { Issue.record("no page for \(code)"); continue }
            #expect(bundle.plainText?.hasPrefix("sleep(_ seconds: Double)") == true)
        }
    }

    @Test("magics: %time, %who, %reset -f, %history, %lsmagic, unknown")
    func magics() async {
        let session = Session()
        #expect(await session.run("%time sleep(0.01)").contains("Wall time:"))
        #expect(await session.run("%%time\nlet kept = 41 + 1").hasPrefix("CPU times: user"))
        #expect(await session.run("kept") == "42")
        #expect(await session.run("%lsmagic").contains("%reset"))
        #expect(await session.run("%nope") == "NameError: unknown magic %nope; available: %time, %%time, %who, %reset, %history, %jobs, %lsmagic")
        #expect(await session.run("%reset") == "ValueError: %reset needs confirmation, and this front end cannot ask: use %reset -f")
        _ = await session.run("%reset -f")
        #expect(await session.run("kept") == "NameError: 'kept' is not defined")
        #expect(await session.run("%history").contains("let kept = 41 + 1"))
    }

    @Test("completion after a dot offers the members of the value's type")
    func memberCompletion() async throws {
        let interpreter = Interpreter()
        try await interpreter.execute(ExecutionRequest(code: "let words = \"a b\"", executionCount: 1), output: RecordingSink())
        let completion = await interpreter.complete("words.up", cursor: 8)
        #expect(completion.matches == ["uppercased"])
        #expect((completion.start, completion.end) == (6, 8))
    }
}

@Suite("Tracebacks")
struct TracebackTests {
    @Test("an error inside functions shows the call chain, each line from the cell it was written in")
    func callChain() async throws {
        let interpreter = Interpreter()
        try await interpreter.execute(ExecutionRequest(code: "func inner(x) {\n  return x + nope\n}", executionCount: 1), output: RecordingSink())
        do {
            try await interpreter.execute(ExecutionRequest(code: "func outer() { return inner(1) }\nouter()", executionCount: 2), output: RecordingSink())
            Issue.record("no error")
        } catch {
            #expect(error.traceback == [
                "  Cell In[2], line 2", "    outer()", "         ^",
                "  Cell In[2], line 1, in outer()", "    func outer() { return inner(1) }", "                               ^",
                "  Cell In[1], line 2, in inner()", "      return x + nope", "                 ^",
                "NameError: 'nope' is not defined",
            ])
        }
    }
}

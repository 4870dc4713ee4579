import Evaluation
import Foundation
import JupyterProtocol
import Testing
@testable import Notebook

@Suite("Notebook documents")
struct NotebookDocumentTests {
    @Test("JSON is written as Python's json.dumps(indent=1, sort_keys=True, ensure_ascii=False) writes it")
    func jupyterFormatting() {
        let value = JSONValue.object(["b": .array([.int(1), .double(0.5), .double(1e-05), .double(2.0)]), "a": .string("é\t\"\u{01}"), "c": .object([:]), "d": .array([])])
        #expect(JupyterJSON.format(value) == "{\n \"a\": \"é\\t\\\"\\u0001\",\n \"b\": [\n  1,\n  0.5,\n  1e-05,\n  2.0\n ],\n \"c\": {},\n \"d\": []\n}\n")
    }

    @Test("validation names the cell and the field")
    func validation() {
        func error(_ json: String) -> String {
            do {
                _ = try NotebookDocument(data: Data(json.utf8), path: "n.ipynb")
                return "accepted"
            } catch {
                return error.description
            }
        }
        #expect(error(#"{"cells": [], "nbformat": 3}"#) == "n.ipynb: nbformat must be 4 (found 3)")
        #expect(error(#"{"cells": [{"cell_type": "code", "source": 5}], "nbformat": 4}"#) == "n.ipynb: cell 0: source must be a string or a list of strings")
        #expect(error(#"{"cells": [{"cell_type": "code", "source": "", "outputs": {}}], "nbformat": 4}"#) == "n.ipynb: cell 0: outputs must be a list")
        #expect(error("[]") == "n.ipynb: the top level is not a JSON object")
    }

    @Test("sources split into lines that keep their breaks; 4.5 cells without ids get one")
    func sourcesAndIDs() throws {
        var document = try NotebookDocument(data: Data(#"{"cells": [{"cell_type": "markdown", "source": "x", "metadata": {}}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}"#.utf8), path: "n")
        document.cells[0].source = "a\nb\n"
        #expect(document.cells[0].fields["source"] == .array([.string("a\n"), .string("b\n")]))
        #expect(document.serialized().contains("\"id\": \"cell-0000\""))
    }
}

@Suite("Notebook outputs")
struct NotebookOutputSinkTests {
    @Test("streams merge, displays update in place, clear(wait:) clears on the next output")
    func outputs() {
        let outputs = NotebookOutputs(cellCount: 2, echo: false)
        let first = outputs.sink(for: 0)
        first.stream(.stdout, "a")
        first.stream(.stdout, "b\nc\n")
        first.display(.plainText("v1"), displayID: "d")
        let second = outputs.sink(for: 1)
        second.updateDisplay(.plainText("v2"), displayID: "d")
        second.stream(.stdout, "old")
        second.clearOutput(wait: true)
        second.stream(.stdout, "new")
        first.stream(.stderr, "late")
        #expect(outputs.outputs(of: 0).count == 3, "late output stays in the cell that wrote it")
        #expect(outputs.outputs(of: 0).prefix(2) == [
            .object(["output_type": .string("stream"), "name": .string("stdout"), "text": .array([.string("ab\n"), .string("c\n")])]),
            .object(["output_type": .string("display_data"), "data": .object(["text/plain": .array([.string("v2")])]), "metadata": .object([:])]),
        ])
        #expect(outputs.outputs(of: 1) == [.object(["output_type": .string("stream"), "name": .string("stdout"), "text": .array([.string("new")])])])
    }
}

import Evaluation
import LanguageTestSupport
import Testing
@testable import LumenLanguage

@Suite("Did-you-mean hints")
struct SuggestionTests {
    @Test("edit distance counts an adjacent transposition as one edit (optimal string alignment)")
    func distances() {
        func distance(_ a: String, _ b: String) -> Int { Suggestion.editDistance(Array(a), Array(b)) }
        #expect(distance("kitten", "sitting") == 3)
        #expect(distance("prnit", "print") == 1)
        #expect(distance("ca", "abc") == 3)
        #expect(distance("", "abc") == 3 && distance("abc", "") == 3 && distance("same", "same") == 0)
    }

    @Test("the closest candidate within a third of the name's length, the alphabetically first on a tie; none for short names")
    func closest() {
        #expect(Suggestion.closest(to: "prnt", among: ["print", "eprint", "sqrt"]) == "print")
        #expect(Suggestion.closest(to: "temprature", among: ["temperature", "topP", "topK"]) == "temperature")
        #expect(Suggestion.closest(to: "topk", among: ["topK", "topP"]) == "topK")
        #expect(Suggestion.closest(to: "xyz", among: ["print", "len"]) == nil)
        #expect(Suggestion.closest(to: "lenn", among: ["lens", "len"]) == "len")
        #expect(Suggestion.closest(to: "z", among: ["x", "y"]) == nil)
    }

    @Test("a signature's labels: labelled parameters only, not `_ name:` nor types")
    func labels() {
        #expect(Builtin.labels(in: "generate(_ model, _ prompt: String, maxTokens: 128, stop: [String] = [], timeout: Double? = nil) -> Generation")
                == ["maxTokens", "stop", "timeout"])
        #expect(Builtin.labels(in: "defaults(maxTokens:, temperature:, …) -> Dictionary") == ["maxTokens", "temperature"])
        #expect(Builtin.labels(in: "f(_ x: [String: Int], by_key: 1)") == ["by_key"])
    }

    @Test("unknown names and labels in cells get a hint")
    func inCells() async {
        func message(_ code: String) async -> String? {
            do {
                try await Interpreter().execute(ExecutionRequest(code: code, executionCount: 1), output: RecordingSink())
                return nil
            } catch {
                return error.message
            }
        }
        #expect(await message("prnt(1)") == "'prnt' is not defined (did you mean 'print'?)")
        #expect(await message("let total = 1\ntotl + 1") == "'totl' is not defined (did you mean 'total'?)")
        #expect(await message("print(1, seperator: \"-\")") == "print() has no argument labelled 'seperator:' (did you mean 'separator:'?)")
        #expect(await message("var count = 1\ncoutn = 2") == "'coutn' is not defined (did you mean 'count'? or declare it with 'var')")
        #expect(await message("slep?") == "'slep' is not defined (did you mean 'sleep'?)")
        #expect(await message("zzzzz") == "'zzzzz' is not defined")
    }
}

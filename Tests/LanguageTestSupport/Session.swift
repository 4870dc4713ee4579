import Evaluation
import LumenLanguage

/// Runs cells on one interpreter and reports what each shows: its result, or its error's name
/// and message.
public struct Session: Sendable {
    /// The interpreter the cells run on.
    public let interpreter: Interpreter

    /// A session with the standard library and `libraries`.
    public init(libraries: [any LumenLibrary] = []) {
        interpreter = Interpreter(libraries: libraries)
    }

    /// What running `code` shows: its standard output and result, or its error.
    public func run(_ code: String) async -> String {
        let sink = RecordingSink()
        do {
            try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: sink)
            return sink.stdout + (sink.results.last ?? "")
        } catch {
            return "\(error.name): \(error.message)"
        }
    }

    /// What running `code` gives as its result (not what it printed or streamed), or its error.
    public func value(_ code: String) async -> String {
        let sink = RecordingSink()
        do {
            try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: sink)
            return sink.results.last ?? ""
        } catch {
            return "\(error.name): \(error.message)"
        }
    }
}

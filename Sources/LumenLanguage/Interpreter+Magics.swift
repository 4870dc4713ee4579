import Display
import Evaluation
import Foundation

/// IPython-style magics at the start of a cell, and `name?` help.
extension Interpreter {
    /// The magics the interpreter itself handles, with what each does; libraries add theirs.
    static let coreMagics: [(name: String, summary: String)] = [
        ("%time", "time one statement: %time STATEMENT (wall and CPU time)"),
        ("%%time", "time the whole cell: %%time on the first line"),
        ("%who", "list your variables as a table"),
        ("%reset", "clear every variable and function and cancel background jobs (-f: without asking)"),
        ("%history", "show this session's inputs (-n: with their numbers)"),
        ("%jobs", "list the background jobs"),
        ("%lsmagic", "list the magics"),
    ]

    /// Every magic of the session: the interpreter's, then its libraries'.
    private var allMagics: [(name: String, summary: String)] {
        Self.coreMagics + state.libraryMagics.map { ($0.name, $0.summary) }
    }

    /// Whether a cell asks to end the session, as in IPython: `exit` or `quit`, bare or called.
    public static func isExitRequest(_ code: String) -> Bool {
        ["exit", "quit", "exit()", "quit()"].contains(code.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The name a help request (`name?` or `name??`) asks about; nil when the code is not one.
    static func helpRequestName(in code: String) -> String? {
        let trimmed = code.trimmingCharacters(in: .whitespacesAndNewlines)
        let name = trimmed.trimmingCharacters(in: CharacterSet(charactersIn: "?"))
        guard trimmed.hasSuffix("?"), !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return nil }
        return name
    }

    /// Whether a cell that starts with a magic is ready to run: a line magic at once, a cell
    /// magic (`%%time`) once its body is ended by a blank line, as IPython's terminal decides;
    /// nil when the cell does not start with one.
    static func magicCompleteness(of code: String) -> Completeness? {
        let trimmed = code.drop { $0.isWhitespace }
        guard trimmed.hasPrefix("%") else { return nil }
        guard trimmed.hasPrefix("%%") else { return .complete }
        let lines = code.split(separator: "\n", omittingEmptySubsequences: false)
        return lines.count > 1 && lines.last?.allSatisfy(\.isWhitespace) == true ? .complete : .incomplete(indent: "")
    }

    /// Handles a cell that is a magic or a help request; returns false when it is ordinary code.
    func runSpecial(_ request: ExecutionRequest, output: any OutputSink) async throws -> Bool {
        let code = request.code.trimmingCharacters(in: .whitespacesAndNewlines)
        if Self.isExitRequest(code) {
            output.askExit()
            return true
        }
        if let name = Self.helpRequestName(in: code) {
            guard let value = globals.lookup(name) else {
                throw LumenError(.name, "'\(name)' is not defined" + Suggestion.hint(for: name, among: globals.visibleNames), at: SourceLocation(line: 1, column: 1))
            }
            output.page(DisplayLibrary.documentation(of: value, name: name))
            return true
        }
        guard code.hasPrefix("%") else { return false }
        let firstLine = code.prefix { $0 != "\n" }
        let words = firstLine.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let rest = String(code.dropFirst(firstLine.count)).trimmingCharacters(in: .newlines)
        switch words[0] {
        case "%%time":
            try await timed(ExecutionRequest(code: rest, executionCount: request.executionCount, storeHistory: false, silent: request.silent), output: output)
        case "%time":
            let statement = String(firstLine.dropFirst("%time".count)).trimmingCharacters(in: .whitespaces)
            try await timed(ExecutionRequest(code: statement, executionCount: request.executionCount, storeHistory: false, silent: request.silent), output: output)
        case "%who":
            let variables = globals.names.filter { entry in
                if case .builtin = entry.value { return false }
                return true
            }.sorted { $0.key < $1.key }
            if variables.isEmpty {
                output.stream(.stdout, "Interactive namespace is empty.\n")
            } else {
                let rows = variables.map { [$0.key, $0.value.typeName, String($0.value.description.prefix(60))] }
                output.display(Table(columns: ["Variable", "Type", "Data"], rows: rows).mimeBundle, displayID: nil)
            }
        case "%reset":
            if !words.contains("-f") {
                let answer: String
                do {
                    answer = try await output.requestInput(prompt: "Once deleted, variables cannot be recovered. Proceed (y/[n])? ", password: false)
                } catch is InputUnavailableError {
                    throw LumenError(.value, "%reset needs confirmation, and this front end cannot ask: use %reset -f", at: SourceLocation(line: 1, column: 1))
                }
                guard answer.lowercased().hasPrefix("y") else {
                    output.stream(.stdout, "Nothing done.\n")
                    return true
                }
            }
            state.jobs.cancelAll()
            resetGlobals()
        case "%history":
            let numbered = words.contains("-n")
            let lines = historyEntries.map { numbered ? "\($0.line): \($0.input)" : $0.input }
            output.stream(.stdout, lines.joined(separator: "\n") + (lines.isEmpty ? "" : "\n"))
        case "%jobs":
            output.display(state.jobs.table.mimeBundle, displayID: nil)
        case "%lsmagic":
            output.stream(.stdout, allMagics.map { "\($0.name)  \($0.summary)" }.joined(separator: "\n") + "\n")
        default:
            guard let magic = state.libraryMagics.first(where: { $0.name == words[0] }) else {
                throw LumenError(.name, "unknown magic \(words[0]); available: \(allMagics.map(\.name).joined(separator: ", "))",
                                 at: SourceLocation(line: 1, column: 1))
            }
            let arguments = Array(words.dropFirst())
            let code: String?
            do {
                code = try await magic.body(arguments, output)
            } catch var error as LumenError {
                error.location = error.location ?? SourceLocation(line: 1, column: 1)
                throw error
            }
            if let code {
                try await executeStatements(ExecutionRequest(code: code, executionCount: request.executionCount, storeHistory: false, silent: request.silent),
                                            output: output)
            }
        }
        return true
    }

    private func timed(_ request: ExecutionRequest, output: any OutputSink) async throws {
        let clock = ContinuousClock()
        let (userBefore, systemBefore) = Self.processTimes()
        let started = clock.now
        defer {
            let wall = (clock.now - started).components
            let (userAfter, systemAfter) = Self.processTimes()
            let (user, system) = (userAfter - userBefore, systemAfter - systemBefore)
            output.stream(.stdout, String(format: "CPU times: user %@, sys %@, total %@\nWall time: %@\n",
                                          Self.format(user), Self.format(system), Self.format(user + system),
                                          Self.format(Double(wall.seconds) + Double(wall.attoseconds) * 1e-18)))
        }
        try await executeStatements(request, output: output)
    }

    /// User and system CPU seconds of this process.
    private static func processTimes() -> (Double, Double) {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return (seconds(usage.ru_utime), seconds(usage.ru_stime))
    }

    private static func format(_ seconds: Double) -> String {
        switch seconds {
        case ..<1e-3: String(format: "%.0f µs", seconds * 1e6)
        case ..<1: String(format: "%.1f ms", seconds * 1e3)
        default: String(format: "%.2f s", seconds)
        }
    }
}

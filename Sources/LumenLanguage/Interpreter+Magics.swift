import Display
import Evaluation
import Foundation

/// IPython-style magics at the start of a cell, and `name?` help.
extension Interpreter {
    /// The magics the interpreter itself handles, with what each does and the method that does
    /// it; libraries add theirs (`Magic`).
    static let coreMagics: [CoreMagic] = [
        CoreMagic(name: "%time", summary: "time one statement: %time STATEMENT (wall and CPU time)") { try await $0.timeStatement($1, output: $2) },
        CoreMagic(name: "%%time", summary: "time the whole cell: %%time on the first line") { try await $0.timeCell($1, output: $2) },
        CoreMagic(name: "%who", summary: "list your variables as a table") { $0.who($1, output: $2) },
        CoreMagic(name: "%reset", summary: "clear every variable and function and cancel background jobs (-f: without asking)") {
            try await $0.reset($1, output: $2)
        },
        CoreMagic(name: "%history", summary: "show this session's inputs (-n: with their numbers)") { $0.history($1, output: $2) },
        CoreMagic(name: "%jobs", summary: "list the background jobs") { $0.jobs($1, output: $2) },
        CoreMagic(name: "%lsmagic", summary: "list the magics") { $0.listMagics($1, output: $2) },
    ]

    /// Every magic of the session: the interpreter's, then its libraries'.
    private var allMagics: [(name: String, summary: String)] {
        Self.coreMagics.map { ($0.name, $0.summary) } + state.libraryMagics.map { ($0.name, $0.summary) }
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
        let invocation = MagicInvocation(words: words, firstLine: String(firstLine), rest: rest, request: request)
        if let magic = Self.coreMagics.first(where: { $0.name == words[0] }) {
            try await magic.run(self, invocation, output)
            return true
        }
        guard let magic = state.libraryMagics.first(where: { $0.name == words[0] }) else {
            throw LumenError(.name, "unknown magic \(words[0]); available: \(allMagics.map(\.name).joined(separator: ", "))",
                             at: SourceLocation(line: 1, column: 1))
        }
        let replacement: String?
        do {
            replacement = try await magic.body(Array(words.dropFirst()), output)
        } catch var error as LumenError {
            error.location = error.location ?? SourceLocation(line: 1, column: 1)
            throw error
        }
        if let replacement { try await executeStatements(invocation.request(running: replacement), output: output) }
        return true
    }

    // MARK: - The core magics

    /// `%%time`: runs the cell's lines after the first, timed.
    private func timeCell(_ invocation: MagicInvocation, output: any OutputSink) async throws {
        try await timed(invocation.request(running: invocation.rest), output: output)
    }

    /// `%time STATEMENT`: runs the rest of the line, timed.
    private func timeStatement(_ invocation: MagicInvocation, output: any OutputSink) async throws {
        let statement = String(invocation.firstLine.dropFirst("%time".count)).trimmingCharacters(in: .whitespaces)
        try await timed(invocation.request(running: statement), output: output)
    }

    /// `%who`: the user's variables as a table.
    private func who(_ invocation: MagicInvocation, output: any OutputSink) {
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
    }

    /// `%reset [-f]`: after a confirmation unless `-f`, cancels the background jobs and clears
    /// every variable and function.
    private func reset(_ invocation: MagicInvocation, output: any OutputSink) async throws {
        if !invocation.words.contains("-f") {
            let answer: String
            do {
                answer = try await output.requestInput(prompt: "Once deleted, variables cannot be recovered. Proceed (y/[n])? ", password: false)
            } catch is InputUnavailableError {
                throw LumenError(.value, "%reset needs confirmation, and this front end cannot ask: use %reset -f", at: SourceLocation(line: 1, column: 1))
            }
            guard answer.lowercased().hasPrefix("y") else {
                output.stream(.stdout, "Nothing done.\n")
                return
            }
        }
        state.jobs.cancelAll()
        resetGlobals()
    }

    /// `%history [-n]`: the session's inputs, numbered with `-n`.
    private func history(_ invocation: MagicInvocation, output: any OutputSink) {
        let numbered = invocation.words.contains("-n")
        let lines = historyEntries.map { numbered ? "\($0.line): \($0.input)" : $0.input }
        output.stream(.stdout, lines.joined(separator: "\n") + (lines.isEmpty ? "" : "\n"))
    }

    /// `%jobs`: the background jobs as a table.
    private func jobs(_ invocation: MagicInvocation, output: any OutputSink) {
        output.display(state.jobs.table.mimeBundle, displayID: nil)
    }

    /// `%lsmagic`: every magic with what it does.
    private func listMagics(_ invocation: MagicInvocation, output: any OutputSink) {
        output.stream(.stdout, allMagics.map { "\($0.name)  \($0.summary)" }.joined(separator: "\n") + "\n")
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

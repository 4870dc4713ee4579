import Evaluation
import Foundation

/// Runs Lumen cells, keeping their state (variables, functions, history) from one cell to the
/// next, and answers completion, inspection and history questions about them.
///
/// Every statement is a cancellation point: cancelling the task that calls `execute` interrupts
/// the cell with an `Interrupted` error.
public actor Interpreter: Evaluator {
    private var globals: [String: Value] = [:]
    private var historyEntries: [HistoryEntry] = []
    private let session = 1

    /// Creates an interpreter with the standard library loaded.
    public init() {
        for builtin in StandardLibrary.all {
            globals[builtin.name] = .builtin(builtin)
        }
    }

    public func execute(_ request: ExecutionRequest, output: any OutputSink) async throws(ExecutionError) {
        if request.storeHistory {
            historyEntries.append(HistoryEntry(session: session, line: request.executionCount, input: request.code))
        }
        do {
            let statements = try Parser.parse(request.code)
            var lastValue = Value.null
            for statement in statements {
                try Task.checkCancellation()
                lastValue = try await run(statement, output: output)
            }
            if !request.silent, !(lastValue.isNull) {
                output.executeResult(lastValue.mimeBundle)
            }
        } catch let error as LumenError {
            throw error.executionError(source: request.code, cellLabel: "Cell In[\(request.executionCount)]")
        } catch is CancellationError {
            throw .interrupted
        } catch {
            throw ExecutionError(name: "InternalError", message: "\(error)", traceback: ["InternalError: \(error)"])
        }
    }

    private func run(_ statement: Statement, output: any OutputSink) async throws -> Value {
        switch statement {
        case .expression(let expression):
            try await evaluate(expression, output: output)
        }
    }

    private func evaluate(_ expression: Expression, output: any OutputSink) async throws -> Value {
        switch expression {
        case .literal(let value, _):
            return value
        case .identifier(let name, let location):
            guard let value = globals[name] else {
                throw LumenError(.name, "'\(name)' is not defined", at: location)
            }
            return value
        case .negate(let operand, let location):
            switch try await evaluate(operand, output: output) {
            case .integer(let value):
                let (negated, overflow) = Int(0).subtractingReportingOverflow(value)
                guard !overflow else { throw LumenError(.value, "integer overflow negating \(value)", at: location) }
                return .integer(negated)
            case .double(let value):
                return .double(-value)
            case let other:
                throw LumenError(.type, "cannot negate a value of type \(other.typeName)", at: location)
            }
        case .call(let callee, let argumentExpressions, let location):
            let function = try await evaluate(callee, output: output)
            guard case .builtin(let builtin) = function else {
                throw LumenError(.type, "a value of type \(function.typeName) cannot be called", at: location)
            }
            var positional: [(Value, SourceLocation)] = []
            var labelled: [(String, Value, SourceLocation)] = []
            for argument in argumentExpressions {
                let value = try await evaluate(argument.value, output: output)
                if let label = argument.label {
                    labelled.append((label, value, argument.value.location))
                } else {
                    positional.append((value, argument.value.location))
                }
            }
            var arguments = Arguments(function: builtin.name, at: location, positional: positional, labelled: labelled)
            return try await builtin.body(&arguments, Builtin.Context(output: output, location: location))
        }
    }

    // MARK: - Questions about code

    public func complete(_ code: String, cursor: Int) async -> Completion {
        let scalars = Array(code.unicodeScalars)
        let end = min(max(cursor, 0), scalars.count)
        var start = end
        while start > 0, Self.isIdentifierScalar(scalars[start - 1]) { start -= 1 }
        let prefix = String(String.UnicodeScalarView(scalars[start..<end]))
        let names = Set(globals.keys).union(Token.keywords)
        let matches = names.filter { $0.hasPrefix(prefix) }.sorted()
        return Completion(matches: matches, start: start, end: end)
    }

    public func inspect(_ code: String, cursor: Int, detailLevel: Int) async -> MIMEBundle? {
        let scalars = Array(code.unicodeScalars)
        var start = min(max(cursor, 0), scalars.count)
        var end = start
        while start > 0, Self.isIdentifierScalar(scalars[start - 1]) { start -= 1 }
        while end < scalars.count, Self.isIdentifierScalar(scalars[end]) { end += 1 }
        if start == end, start > 0, scalars[start - 1] == "(" {
            return await inspect(code, cursor: start - 1, detailLevel: detailLevel)
        }
        let name = String(String.UnicodeScalarView(scalars[start..<end]))
        guard let value = globals[name] else { return nil }
        switch value {
        case .builtin(let builtin):
            return MIMEBundle([
                "text/plain": "\(builtin.signature)\n\n\(builtin.summary)",
                "text/markdown": "```swift\n\(builtin.signature)\n```\n\n\(builtin.summary)",
            ])
        default:
            let summary = "\(name): \(value.typeName) = \(value.description)"
            return MIMEBundle(["text/plain": summary, "text/markdown": "`\(summary)`"])
        }
    }

    public func completeness(of code: String) async -> Completeness {
        do {
            _ = try Parser.parse(code)
            return .complete
        } catch {
            return error.needsMoreInput ? .incomplete(indent: "") : .invalid
        }
    }

    public func history(_ query: HistoryQuery) async -> [HistoryEntry] {
        switch query {
        case .tail(let count):
            return Array(historyEntries.suffix(max(0, count)))
        case .range(let requestedSession, let start, let stop):
            guard requestedSession == 0 || requestedSession == session else { return [] }
            return historyEntries.filter { entry in entry.line >= start && (stop.map { entry.line < $0 } ?? true) }
        case .search(let pattern, let count, let unique):
            var seen: Set<String> = []
            var found = historyEntries.filter { entry in
                guard fnmatch(pattern, entry.input, 0) == 0 else { return false }
                return !unique || seen.insert(entry.input).inserted
            }
            if let count { found = Array(found.suffix(max(0, count))) }
            return found
        }
    }

    private static func isIdentifierScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
    }
}

extension Value {
    /// Whether the value is `nil`.
    var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

import Evaluation
import OrderedJSON

/// Why a debug request failed, as its response's `message`.
struct DebugFailure: Error {
    let message: String

    init(_ message: String) {
        self.message = message
    }
}

/// The Debug Adapter Protocol as JupyterLab speaks it to a kernel (Jupyter's messaging spec,
/// "Debug request"; JEP 47): the requests, answered from one table.
extension Interpreter {
    public nonisolated var hasDebugger: Bool { true }

    public nonisolated func debug(_ request: DebugRequest, events: any DebugEventSink) async -> DebugResponse {
        debugger.setEvents(events)
        var failure: String?
        var body: OrderedJSON = [:]
        if let command = Self.debugCommands[request.command] {
            if debugger.isStarted.load(ordering: .relaxed) || command.beforeStart {
                do {
                    body = try await command.handle(self, request.arguments)
                } catch let error as DebugFailure {
                    failure = error.message
                } catch {
                    failure = "\(error)"
                }
            } else {
                failure = "the debugger is not started: send 'initialize' first ('\(request.command)' needs it)"
            }
        } else {
            failure = "unknown debug command '\(request.command)'"
        }
        return DebugResponse(seq: debugger.nextSequence(), requestSeq: request.seq, success: failure == nil, command: request.command,
                             message: failure, body: body)
    }

    /// Answers one request's arguments with its response's body.
    private typealias DebugHandler = @Sendable (Interpreter, OrderedJSON) async throws -> OrderedJSON

    /// A command the debugger takes: whether it is answered before `initialize` (and after
    /// `disconnect`: ipykernel's "static" requests), and how.
    private struct DebugCommand: Sendable {
        let beforeStart: Bool
        let handle: DebugHandler

        init(beforeStart: Bool = false, _ handle: @escaping DebugHandler) {
            self.beforeStart = beforeStart
            self.handle = handle
        }
    }

    /// The one table of the commands the debugger takes.
    private static let debugCommands: [String: DebugCommand] = [
        "initialize": DebugCommand(beforeStart: true) { interpreter, _ in
            interpreter.debugger.start()
            return capabilities
        },
        "attach": DebugCommand { _, _ in [:] },
        "configurationDone": DebugCommand { _, _ in [:] },
        "disconnect": DebugCommand(beforeStart: true) { interpreter, _ in
            interpreter.debugger.stop()
            return [:]
        },
        "debugInfo": DebugCommand(beforeStart: true) { interpreter, _ in interpreter.debugger.info() },
        "dumpCell": DebugCommand { interpreter, arguments in
            guard let path = interpreter.debugger.dump(try arguments.required("code", as: \.stringValue)) else {
                throw DebugFailure("\(Debugger.sourceLimit) cells' sources are kept already; restart the kernel to debug more")
            }
            return ["sourcePath": .string(path)]
        },
        "source": DebugCommand { interpreter, arguments in
            let path = try (arguments["source"] ?? [:]).required("path", as: \.stringValue)
            guard let code = interpreter.debugger.source(at: path) else { throw DebugFailure("source unavailable: no cell was dumped as '\(path)'") }
            return ["content": .string(code)]
        },
        "setBreakpoints": DebugCommand { interpreter, arguments in
            let path = try (arguments["source"] ?? [:]).required("path", as: \.stringValue)
            guard case .array(let requested)? = arguments["breakpoints"] ?? .array([]) else {
                throw DebugFailure("'breakpoints' must be an array of {line}")
            }
            let lines = try requested.map { try $0.required("line", as: \.integerValue) }
            let breakpoints = interpreter.debugger.setBreakpoints(lines, in: path)
            return ["breakpoints": .array(breakpoints.map { breakpoint in
                var members: [(key: String, value: OrderedJSON)] = [
                    (key: "id", value: .integer(breakpoint.id)), (key: "verified", value: .bool(breakpoint.verified)),
                    (key: "line", value: .integer(breakpoint.line)), (key: "source", value: ["path": .string(path)]),
                ]
                if let message = breakpoint.message { members.append((key: "message", value: .string(message))) }
                return .object(members)
            })]
        },
        "setExceptionBreakpoints": DebugCommand { interpreter, arguments in
            guard case .array(let filters)? = arguments["filters"] ?? .array([]) else { throw DebugFailure("'filters' must be an array of names") }
            let names = filters.compactMap(\.stringValue)
            let known = Set(exceptionFilters.map(\.filter))
            if let unknown = names.first(where: { !known.contains($0) }) {
                throw DebugFailure("unknown exception filter '\(unknown)' (known: \(known.sorted().joined(separator: ", ")))")
            }
            interpreter.debugger.setExceptionFilters(names)
            return [:]
        },
        "threads": DebugCommand { interpreter, _ in
            ["threads": .array(interpreter.debugger.threads().map { ["id": .integer($0.id), "name": .string($0.name)] })]
        },
        "stackTrace": DebugCommand { interpreter, arguments in
            let thread = try arguments.required("threadId", as: \.integerValue)
            guard let frames = interpreter.debugger.frames(of: thread) else { throw DebugFailure("thread \(thread) is not stopped") }
            let start = max(0, arguments["startFrame"]?.integerValue ?? 0)
            let levels = arguments["levels"]?.integerValue ?? 0
            let shown = frames.dropFirst(start).prefix(levels > 0 ? levels : frames.count)
            return [
                "stackFrames": .array(shown.map { id, frame in
                    [
                        "id": .integer(id), "name": .string(frame.name), "line": .integer(frame.line), "column": 1,
                        "source": ["name": .string(frame.source.label), "path": .string(interpreter.debugger.path(of: frame.source))],
                    ]
                }),
                "totalFrames": .integer(frames.count),
            ]
        },
        "scopes": DebugCommand { interpreter, arguments in
            let id = try arguments.required("frameId", as: \.integerValue)
            guard let (frame, _) = interpreter.debugger.frame(id) else { throw DebugFailure("no stopped frame has id \(id)") }
            var scopes: [OrderedJSON] = []
            if frame.scope !== interpreter.globals {
                scopes.append(["name": "Locals", "variablesReference": .integer(interpreter.debugger.reference(to: .locals(frame.scope))),
                               "expensive": false])
            }
            scopes.append(["name": "Globals", "variablesReference": .integer(interpreter.debugger.reference(to: .globals)), "expensive": false])
            return ["scopes": .array(scopes)]
        },
        "variables": DebugCommand { interpreter, arguments in
            let reference = try arguments.required("variablesReference", as: \.integerValue)
            guard let container = interpreter.debugger.container(reference) else { throw DebugFailure("no variables have reference \(reference)") }
            let start = max(0, arguments["start"]?.integerValue ?? 0)
            let count = arguments["count"]?.integerValue ?? 0
            let children = interpreter.variables(of: container)
            let page = children.dropFirst(start).prefix(count > 0 ? count : VariableView.childLimit)
            return ["variables": .array(page.map { interpreter.variableJSON(named: $0.name, $0.value, evaluateName: $0.evaluateName) })]
        },
        "evaluate": DebugCommand { interpreter, arguments in
            let expression = try arguments.required("expression", as: \.stringValue)
            let stopped = try arguments["frameId"]?.integerValue.map { id in
                guard let stopped = interpreter.debugger.frame(id) else { throw DebugFailure("no stopped frame has id \(id)") }
                return stopped
            }
            let output = stopped?.output ?? DebugOutputSink(debugger: interpreter.debugger)
            let value: Value
            do {
                value = try await interpreter.evaluateForDebugger(expression, in: stopped?.frame, output: output)
            } catch let error as LumenError {
                throw DebugFailure("\(error.kind.rawValue): \(error.message)")
            }
            let view = VariableView(value)
            return [
                "result": .string(view.text), "type": .string(value.typeName),
                "variablesReference": .integer(view.hasChildren ? interpreter.debugger.reference(to: .value(value)) : 0),
            ]
        },
        "continue": DebugCommand { interpreter, arguments in
            try interpreter.resume(arguments, step: nil)
            return ["allThreadsContinued": false]
        },
        "next": DebugCommand { interpreter, arguments in
            try interpreter.resume(arguments) { .over(depth: $0) }
            return [:]
        },
        "stepIn": DebugCommand { interpreter, arguments in
            try interpreter.resume(arguments) { _ in .into }
            return [:]
        },
        "stepOut": DebugCommand { interpreter, arguments in
            try interpreter.resume(arguments) { .out(depth: $0) }
            return [:]
        },
        "pause": DebugCommand { interpreter, arguments in
            interpreter.debugger.requestPause(try arguments.required("threadId", as: \.integerValue))
            return [:]
        },
        "inspectVariables": DebugCommand(beforeStart: true) { interpreter, _ in
            interpreter.debugger.forgetReferences()
            let variables = interpreter.variables(of: .globals)
            return ["variables": .array(variables.map { interpreter.variableJSON(named: $0.name, $0.value, evaluateName: $0.evaluateName) })]
        },
        "richInspectVariables": DebugCommand(beforeStart: true) { interpreter, arguments in
            let name = try arguments.required("variableName", as: \.stringValue)
            let scope = arguments["frameId"]?.integerValue.flatMap { interpreter.debugger.frame($0)?.frame.scope } ?? interpreter.globals
            guard let value = scope.lookup(name) else { throw DebugFailure("'\(name)' is not defined here") }
            return ["data": VariableView.wireData(of: value.mimeBundle), "metadata": [:]]
        },
        "copyToGlobals": DebugCommand(beforeStart: true) { interpreter, arguments in
            let source = try arguments.required("srcVariableName", as: \.stringValue)
            let destination = try arguments.required("dstVariableName", as: \.stringValue)
            let id = try arguments.required("srcFrameId", as: \.integerValue)
            guard let (frame, _) = interpreter.debugger.frame(id) else { throw DebugFailure("no stopped frame has id \(id)") }
            guard let value = frame.scope.lookup(source) else { throw DebugFailure("'\(source)' is not defined in frame \(id)") }
            interpreter.globals.declare(destination, value, constant: false)
            return [:]
        },
        "modules": DebugCommand(beforeStart: true) { _, _ in ["modules": [], "totalModules": 0] },
    ]

    /// The exception filters a client can set; Lumen cannot catch errors, so a raised error is
    /// always uncaught and both stop where it is raised.
    private static let exceptionFilters: [(filter: String, label: String, description: String)] = [
        ("raised", "Raised Errors", "Stop where any error is raised"),
        ("uncaught", "Uncaught Errors", "Stop where an error that ends the cell is raised (in Lumen, every error)"),
    ]

    /// What `initialize` answers: the Debug Adapter Protocol capabilities.
    private static let capabilities: OrderedJSON = [
        "supportsConfigurationDoneRequest": true,
        "supportsEvaluateForHovers": true,
        "supportsConditionalBreakpoints": false,
        "supportsSetVariable": false,
        "supportsStepBack": false,
        "supportsModulesRequest": true,
        "supportsDelayedStackTraceLoading": true,
        "exceptionBreakpointFilters": .array(exceptionFilters.map { filter in
            ["filter": .string(filter.filter), "label": .string(filter.label), "description": .string(filter.description), "default": false]
        }),
    ]

    /// Resumes the thread the arguments name, to stop where `step` says given its depth.
    private nonisolated func resume(_ arguments: OrderedJSON, step: ((Int) -> Debugger.Step)?) throws {
        let thread = try arguments.required("threadId", as: \.integerValue)
        let resumed = debugger.resume(thread, step: debugger.depth(of: thread).flatMap { depth in step.map { $0(depth) } })
        guard resumed else { throw DebugFailure("thread \(thread) is not stopped") }
    }

    /// The variables a reference lists, with the name each is evaluated by when it has one.
    private nonisolated func variables(of container: Debugger.Container) -> [(name: String, value: Value, evaluateName: String?)] {
        switch container {
        case .globals:
            return globals.names.filter { if case .builtin = $0.value { false } else { true } }
                .sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value, evaluateName: $0.key) }
        case .locals(let innermost):
            var seen: Set<String> = []
            var variables: [(name: String, value: Value, evaluateName: String?)] = []
            var scope: Scope? = innermost
            while let level = scope, level !== globals {
                for (name, value) in level.names.sorted(by: { $0.key < $1.key }) where seen.insert(name).inserted {
                    variables.append((name: name, value: value, evaluateName: name))
                }
                scope = level.parent
            }
            return variables
        case .value(let value):
            return VariableView(value).children.map { (name: $0.name, value: $0.value, evaluateName: nil) }
        }
    }

    /// A variable as the Variables panel shows it. Only a value that expands names its type:
    /// JupyterLab's tree shows a variable's type in place of its value whenever one is given,
    /// unless it is one of Python's scalar types, so a number or a string shows its value
    /// there only without one (as ipykernel's `int` 3 shows 3, and its `list` shows `list`).
    private nonisolated func variableJSON(named name: String, _ value: Value, evaluateName: String?) -> OrderedJSON {
        let view = VariableView(value)
        var members: [(key: String, value: OrderedJSON)] = [(key: "name", value: .string(name)), (key: "value", value: .string(view.text))]
        if view.hasChildren { members.append((key: "type", value: .string(value.typeName))) }
        members.append((key: "variablesReference", value: .integer(view.hasChildren ? debugger.reference(to: .value(value)) : 0)))
        if let evaluateName { members.append((key: "evaluateName", value: .string(evaluateName))) }
        return .object(members)
    }
}

extension OrderedJSON {
    /// Member `key` read by `read` (`\.stringValue`, `\.integerValue`); throws naming the member
    /// when it is missing or of another type.
    fileprivate func required<Wanted>(_ key: String, as read: KeyPath<OrderedJSON, Wanted?>) throws(DebugFailure) -> Wanted {
        guard let member = self[key] else { throw DebugFailure("missing argument '\(key)'") }
        guard let value = member[keyPath: read] else { throw DebugFailure("argument '\(key)' has the wrong type: \(member.text)") }
        return value
    }
}

/// Statements: declarations, assignment, branches, loops and functions.
extension Interpreter {
    func run(_ statements: [Statement], in scope: Scope, context: inout RunContext) async throws {
        for statement in statements {
            try Task.checkCancellation()
            try await run(statement, in: scope, context: &context)
        }
    }

    /// Runs `statement`; an expression statement's value is returned (the others' is nil). While
    /// the debugger is started, the statement is first a place the cell may stop.
    @discardableResult
    func run(_ statement: Statement, in scope: Scope, context: inout RunContext) async throws -> Value {
        guard debugger.isStarted.load(ordering: .relaxed) else { return try await perform(statement, in: scope, context: &context) }
        if debugger.isArmed.load(ordering: .relaxed) { try await stopIfAsked(before: statement, in: scope, context: context) }
        do {
            return try await perform(statement, in: scope, context: &context)
        } catch let error as LumenError where !error.seenByDebugger && debugger.stopsOnErrors {
            throw try await stop(at: error, raisedBy: statement, in: scope, context: context)
        }
    }

    /// Carries out `statement`.
    func perform(_ statement: Statement, in scope: Scope, context: inout RunContext) async throws -> Value {
        switch statement {
        case .expression(let expression):
            return try await evaluate(expression, in: scope, context: &context)
        case .declaration(let name, let constant, let value, _):
            var initial = Value.null
            if let value { initial = try await evaluate(value, in: scope, context: &context) }
            scope.declare(name, initial, constant: constant)
        case .assignment(let target, let operation, let valueExpression, let location):
            var value = try await evaluate(valueExpression, in: scope, context: &context)
            if let operation {
                let current = try await evaluate(target, in: scope, context: &context)
                value = try Operators.binary(operation, current, value, at: location)
            }
            try await assign(value, to: target, in: scope, context: &context)
        case .conditional(let branches, let otherwise):
            for branch in branches {
                if try await condition(branch.condition, in: scope, context: &context) {
                    try await run(branch.body, in: Scope(parent: scope), context: &context)
                    return .null
                }
            }
            if let otherwise { try await run(otherwise, in: Scope(parent: scope), context: &context) }
        case .forIn(let names, let sequenceExpression, let body, let location):
            let sequence = try await evaluate(sequenceExpression, in: scope, context: &context)
            for element in try Operators.iteration(of: sequence, at: sequenceExpression.location) {
                try Task.checkCancellation()
                let iteration = Scope(parent: scope)
                try bind(names, to: element, in: iteration, at: location)
                do {
                    try await run(body, in: iteration, context: &context)
                } catch ControlFlow.breakLoop {
                    break
                } catch ControlFlow.continueLoop {
                    continue
                }
            }
        case .whileLoop(let conditionExpression, let body):
            while try await condition(conditionExpression, in: scope, context: &context) {
                try Task.checkCancellation()
                do {
                    try await run(body, in: Scope(parent: scope), context: &context)
                } catch ControlFlow.breakLoop {
                    break
                } catch ControlFlow.continueLoop {
                    continue
                }
            }
        case .breakLoop(let location):
            throw ControlFlow.breakLoop(location)
        case .continueLoop(let location):
            throw ControlFlow.continueLoop(location)
        case .returnValue(let expression, _):
            var result = Value.null
            if let expression { result = try await evaluate(expression, in: scope, context: &context) }
            throw ControlFlow.returnValue(result)
        case .function(let name, let closure, _):
            scope.declare(name, .function(Function(name: name, closure: closure, scope: scope, source: context.source)), constant: false)
        }
        return .null
    }

    /// Binds a loop's names: one name takes the element, several unpack an array element.
    private func bind(_ names: [String], to element: Value, in scope: Scope, at location: SourceLocation) throws {
        guard names.count > 1 else {
            scope.declare(names[0], element, constant: true)
            return
        }
        guard case .array(let parts) = element, parts.count == names.count else {
            throw LumenError(.type, "cannot unpack \(element.typeName) \(element.description) into \(names.count) names", at: location)
        }
        for (name, part) in zip(names, parts) { scope.declare(name, part, constant: true) }
    }

    func condition(_ expression: Expression, in scope: Scope, context: inout RunContext) async throws -> Bool {
        let value = try await evaluate(expression, in: scope, context: &context)
        guard case .bool(let flag) = value else {
            throw LumenError(.type, "a condition must be a Bool, not \(value.typeName)", at: expression.location)
        }
        return flag
    }

    /// Stores `value` into an identifier, a (nested) subscript of one, or a settable property of
    /// a host object (a widget's `value`).
    func assign(_ value: Value, to target: Expression, in scope: Scope, context: inout RunContext) async throws {
        switch target {
        case .identifier(let name, let location):
            switch scope.assign(name, value) {
            case .assigned: return
            case .constant: throw LumenError(.type, "cannot assign to '\(name)': it is a 'let' constant", at: location)
            case .undeclared:
                let hint = Suggestion.closest(to: name, among: scope.visibleNames).map { "did you mean '\($0)'? or " } ?? ""
                throw LumenError(.name, "'\(name)' is not defined (\(hint)declare it with 'var')", at: location)
            }
        case .subscripted(let base, let indexExpression, let location):
            let container = try await evaluate(base, in: scope, context: &context)
            let index = try await evaluate(indexExpression, in: scope, context: &context)
            try await assign(try Operators.replacing(index, in: container, with: value, at: location), to: base, in: scope, context: &context)
        case .member(let base, let name, let location):
            let receiver = try await evaluate(base, in: scope, context: &context)
            guard case .host(let object as any SettableHostObject) = receiver, object.settablePropertyNames.contains(name) else {
                throw LumenError(.type, "cannot assign to property '\(name)' of \(receiver.typeName)", at: location)
            }
            try await object.setProperty(name, to: value, context: builtinContext(at: location, context: context))
        default:
            throw LumenError(.syntax, "cannot assign to this expression", at: target.location)
        }
    }
}

/// Expressions: literals, names, operators, collections, closures, member access and calls.
extension Interpreter {
    func evaluate(_ expression: Expression, in scope: Scope, context: inout RunContext) async throws -> Value {
        switch expression {
        case .literal(let value, _):
            return value
        case .interpolation(let parts, _):
            var text = ""
            for part in parts {
                switch part {
                case .text(let piece): text += piece
                case .expression(let inner): text += try await evaluate(inner, in: scope, context: &context).printed
                }
            }
            return .string(text)
        case .identifier(let name, let location):
            guard let value = scope.lookup(name) else {
                throw LumenError(.name, "'\(name)' is not defined" + Suggestion.hint(for: name, among: scope.visibleNames), at: location)
            }
            return value
        case .shorthandArgument(let index, let location):
            guard index < context.shorthandArguments.count else {
                throw LumenError(.name, "$\(index) is not an argument of this closure", at: location)
            }
            return context.shorthandArguments[index]
        case .array(let elements, _):
            var values: [Value] = []
            for element in elements { values.append(try await evaluate(element, in: scope, context: &context)) }
            return .array(values)
        case .dictionary(let pairs, _):
            var dictionary = LumenDictionary()
            for pair in pairs {
                let key = try await evaluate(pair.key, in: scope, context: &context)
                guard DictionaryKey(key) != nil else {
                    throw LumenError(.type, "a \(key.typeName) cannot be a dictionary key", at: pair.key.location)
                }
                dictionary[key] = try await evaluate(pair.value, in: scope, context: &context)
            }
            return .dictionary(dictionary)
        case .unary(let operation, let operand, let location):
            return try Operators.unary(operation, try await evaluate(operand, in: scope, context: &context), at: location)
        case .binary("&&", let left, let right, _):
            return .bool(try await condition(left, in: scope, context: &context) ? try await condition(right, in: scope, context: &context) : false)
        case .binary("||", let left, let right, _):
            return .bool(try await condition(left, in: scope, context: &context) ? true : try await condition(right, in: scope, context: &context))
        case .binary("??", let left, let right, _):
            let value = try await evaluate(left, in: scope, context: &context)
            return value.isNull ? try await evaluate(right, in: scope, context: &context) : value
        case .binary(let operation, let left, let right, let location):
            let leftValue = try await evaluate(left, in: scope, context: &context)
            return try Operators.binary(operation, leftValue, try await evaluate(right, in: scope, context: &context), at: location)
        case .ternary(let test, let whenTrue, let whenFalse, _):
            return try await evaluate(try await condition(test, in: scope, context: &context) ? whenTrue : whenFalse, in: scope, context: &context)
        case .closure(let closure, _):
            return .function(Function(name: "closure", closure: closure, scope: scope, source: context.source))
        case .member(let base, let name, let location):
            let value = try await evaluate(base, in: scope, context: &context)
            if case .host(let object) = value, let awaited = try await object.awaitedProperty(name, at: location) {
                return awaited
            }
            return try Methods.member(name, of: value, at: location)
        case .subscripted(let base, let index, let location):
            let container = try await evaluate(base, in: scope, context: &context)
            return try Operators.subscripted(container, try await evaluate(index, in: scope, context: &context), at: location)
        case .indices(let items, _):
            var values: [Value] = []
            for item in items { values.append(try await evaluate(item, in: scope, context: &context)) }
            return .host(IndexTuple(values))
        case .call(let callee, let argumentExpressions, let location):
            let function = try await evaluate(callee, in: scope, context: &context)
            var positional: [(Value, SourceLocation)] = []
            var labelled: [(String, Value, SourceLocation)] = []
            for argument in argumentExpressions {
                let value = try await evaluate(argument.value, in: scope, context: &context)
                if let label = argument.label {
                    labelled.append((label, value, argument.value.location))
                } else {
                    positional.append((value, argument.value.location))
                }
            }
            if debugger.isStarted.load(ordering: .relaxed) { context.callScope = scope }
            let result = try await call(function, positional: positional, labelled: labelled, at: location, context: &context)
            // A mutating method (`xs.append(4)`) returns the new receiver, stored back into its variable.
            if case .method(_, let name) = function, Methods.mutating.contains(name), case .member(let base, _, _) = callee {
                try await assign(result, to: base, in: scope, context: &context)
                return .null
            }
            return result
        }
    }

    /// Calls a function value: a built-in, a user function or closure, or a method.
    func call(_ function: Value, positional: [(Value, SourceLocation)], labelled: [(String, Value, SourceLocation)],
              at location: SourceLocation, context: inout RunContext) async throws -> Value {
        let builtinContext = builtinContext(at: location, context: context)
        switch function {
        case .builtin(let builtin):
            var arguments = Arguments(function: builtin.name, at: location, positional: positional, labelled: labelled, knownLabels: builtin.labels)
            return try await builtin.body(&arguments, builtinContext)
        case .method(let receiver, let name):
            var arguments = Arguments(function: name, at: location, positional: positional, labelled: labelled)
            return try await Methods.call(name, on: receiver, arguments: &arguments, context: builtinContext)
        case .function(let user):
            return try await invoke(user, positional: positional, labelled: labelled, at: location, context: &context)
        default:
            throw LumenError(.type, "a value of type \(function.typeName) cannot be called", at: location)
        }
    }

    /// What a built-in, a method or a property set called at `location` is given: the cell's output
    /// and a way to call Lumen functions from there.
    func builtinContext(at location: SourceLocation, context: RunContext) -> Builtin.Context {
        Builtin.Context(output: context.output, location: location, session: state) { [context] function, arguments, output in
            var nested = context
            nested.output = output
            nested.shorthandArguments = []
            return try await self.call(function, positional: arguments.map { ($0, location) }, labelled: [], at: location, context: &nested)
        }
    }

    private func invoke(_ function: Function, positional: [(Value, SourceLocation)], labelled: [(String, Value, SourceLocation)],
                        at location: SourceLocation, context: inout RunContext) async throws -> Value {
        guard context.depth < Self.maximumCallDepth else {
            throw LumenError(.value, "calls nested more than \(Self.maximumCallDepth) deep (runaway recursion?)", at: location)
        }
        let local = Scope(parent: function.scope)
        var remaining = positional[...]
        var labels = labelled
        for parameter in function.closure.parameters {
            var value: Value?
            if let label = parameter.label {
                if let index = labels.firstIndex(where: { $0.0 == label }) { value = labels.remove(at: index).1 }
            } else if let next = remaining.popFirst() {
                value = next.0
            }
            if value == nil, let defaultValue = parameter.defaultValue {
                var defaults = RunContext(output: context.output, depth: context.depth + 1, source: function.source)
                value = try await evaluate(defaultValue, in: local, context: &defaults)
            }
            guard let value else {
                let written = parameter.label.map { "'\($0):'" } ?? "'\(parameter.name)'"
                throw LumenError(.type, "\(function.name)() is missing its argument \(written)", at: location)
            }
            local.declare(parameter.name, value, constant: false)
        }
        let usesShorthand = function.closure.parameters.isEmpty
        if let extra = remaining.first, !usesShorthand {
            throw LumenError(.type, "\(function.name)() got too many arguments", at: extra.1)
        }
        if let extra = labels.first {
            throw LumenError(.type, "\(function.name)() has no argument labelled '\(extra.0):'", at: extra.2)
        }
        var inner = RunContext(output: context.output, depth: context.depth + 1, source: function.source,
                               shorthandArguments: usesShorthand ? remaining.map(\.0) : [], function: function.name)
        if debugger.isStarted.load(ordering: .relaxed) {
            inner.callers = CallerFrames(frame: frame(at: location.line, in: context.callScope ?? globals, context: context), outer: context.callers)
        }
        // A closure whose body is one expression returns its value, as in Swift.
        if function.name == "closure", function.closure.body.count == 1, case .expression(let expression) = function.closure.body[0] {
            do {
                return try await run(.expression(expression), in: local, context: &inner)
            } catch var error as LumenError {
                error.callChain.append((function.name, location, function.source))
                throw error
            }
        }
        do {
            try await run(function.closure.body, in: local, context: &inner)
        } catch ControlFlow.returnValue(let value) {
            return value
        } catch var error as LumenError {
            error.callChain.append((function.name, location, function.source))
            throw error
        }
        return .null
    }
}

import Foundation

/// Properties and methods of Lumen's value types (`xs.count`, `s.split(" ")`, `xs.map { … }`).
enum Methods {
    /// Methods that change their receiver: the call's result is stored back into the receiver's
    /// variable, so collections keep Swift's value semantics.
    static let mutating: Set<String> = ["append", "insert", "remove", "removeLast", "removeAll"]

    /// The methods of each type, for completion and error messages.
    static let names: [String: [String]] = [
        "Array": ["append", "contains", "count", "enumerated", "filter", "first", "firstIndex", "insert", "isEmpty", "joined",
                  "last", "map", "max", "min", "reduce", "remove", "removeAll", "removeLast", "reversed", "sorted", "zip"],
        "Range": ["contains", "count", "filter", "isEmpty", "map", "reduce", "reversed"],
        "String": ["contains", "count", "hasPrefix", "hasSuffix", "isEmpty", "lowercased", "replacing", "split", "trimmed", "uppercased"],
        "Dictionary": ["count", "isEmpty", "keys", "values"],
    ]

    /// `value.name`: a property's value, or a method waiting for its call.
    static func member(_ name: String, of value: Value, at location: SourceLocation) throws -> Value {
        switch (value, name) {
        case (.array(let elements), "count"): return .integer(elements.count)
        case (.array(let elements), "isEmpty"): return .bool(elements.isEmpty)
        case (.array(let elements), "first"): return elements.first ?? .null
        case (.array(let elements), "last"): return elements.last ?? .null
        case (.string(let text), "count"): return .integer(text.count)
        case (.string(let text), "isEmpty"): return .bool(text.isEmpty)
        case (.dictionary(let dictionary), "count"): return .integer(dictionary.count)
        case (.dictionary(let dictionary), "isEmpty"): return .bool(dictionary.isEmpty)
        case (.dictionary(let dictionary), "keys"): return .array(dictionary.pairs.map(\.key))
        case (.dictionary(let dictionary), "values"): return .array(dictionary.pairs.map(\.value))
        case (.range(let lower, let upper), "count"): return .integer(upper - lower)
        case (.range(let lower, let upper), "isEmpty"): return .bool(upper == lower)
        case (.host(let object), _):
            let property: Value?
            do {
                property = try object.property(name)
            } catch var error as LumenError {
                error.location = error.location ?? location
                throw error
            } catch {
                throw LumenError(.model, "\(error)", at: location)
            }
            if let property { return property }
            guard object.methodNames.contains(name) else {
                let known = (object.propertyNames + object.methodNames).sorted().joined(separator: ", ")
                throw LumenError(.type, "a \(object.typeName) has no member '\(name)': it has \(known)", at: location)
            }
            return .method(value, name)
        default:
            guard names[value.typeName]?.contains(name) == true else {
                let known = names[value.typeName].map { ": it has " + $0.joined(separator: ", ") } ?? ""
                throw LumenError(.type, "a \(value.typeName) has no member '\(name)'\(known)", at: location)
            }
            return .method(value, name)
        }
    }

    /// Calls method `name` on `receiver`.
    static func call(_ name: String, on receiver: Value, arguments: inout Arguments, context: Builtin.Context) async throws -> Value {
        let location = context.location
        if case .range = receiver { return try await call(name, on: .array(try Operators.elements(of: receiver, at: location)), arguments: &arguments, context: context) }
        if case .host = receiver, let builtin = context.session.builtins[name] {
            var withReceiver = arguments.prepending(receiver, at: location, knownLabels: builtin.labels)
            return try await builtin.body(&withReceiver, context)
        }
        switch (receiver, name) {
        case (.array(let elements), "map"):
            let function = try arguments.requirePositional("transform").0
            try arguments.finish()
            var results: [Value] = []
            for element in elements {
                try Task.checkCancellation()
                results.append(try await context.call(function, [element]))
            }
            return .array(results)
        case (.array(let elements), "filter"):
            let function = try arguments.requirePositional("isIncluded").0
            try arguments.finish()
            var results: [Value] = []
            for element in elements {
                try Task.checkCancellation()
                let keep = try await context.call(function, [element])
                guard case .bool(let flag) = keep else {
                    throw LumenError(.type, "filter's closure must return a Bool, not \(keep.typeName)", at: location)
                }
                if flag { results.append(element) }
            }
            return .array(results)
        case (.array(let elements), "reduce"):
            var accumulator = try arguments.requirePositional("initial").0
            let function = try arguments.requirePositional("combine").0
            try arguments.finish()
            for element in elements {
                try Task.checkCancellation()
                accumulator = try await context.call(function, [accumulator, element])
            }
            return accumulator
        case (.array(let elements), "sorted"):
            let order = arguments.nextPositional()?.0 ?? arguments.labelled("by")?.0
            try arguments.finish()
            return .array(try await sort(elements, by: order, context: context))
        case (.array(let elements), "enumerated"):
            try arguments.finish()
            return .array(elements.enumerated().map { .array([.integer($0.offset), $0.element]) })
        case (.array(let elements), "reversed"):
            try arguments.finish()
            return .array(elements.reversed())
        case (.array(let elements), "contains"):
            let element = try arguments.requirePositional("element").0
            try arguments.finish()
            return .bool(elements.contains { $0.equals(element) })
        case (.array(let elements), "firstIndex"):
            let element = try arguments.requireLabelled("of").0
            try arguments.finish()
            return elements.firstIndex { $0.equals(element) }.map { .integer($0) } ?? .null
        case (.array(let elements), "joined"):
            let separator = try arguments.labelledString("separator") ?? ""
            try arguments.finish()
            return .string(elements.map(\.printed).joined(separator: separator))
        case (.array(let elements), "zip"):
            let other = try arguments.requirePositional("other")
            try arguments.finish()
            return .array(zip(elements, try Operators.elements(of: other.0, at: other.1)).map { .array([$0, $1]) })
        case (.array(let elements), "min"), (.array(let elements), "max"):
            try arguments.finish()
            let sorted = try await sort(elements, by: nil, context: context)
            return (name == "min" ? sorted.first : sorted.last) ?? .null
        case (.array(let elements), "append"):
            let element = try arguments.requirePositional("element").0
            try arguments.finish()
            return .array(elements + [element])
        case (.array(var elements), "insert"):
            let element = try arguments.requirePositional("element").0
            let position = try arguments.integer(try arguments.requireLabelled("at"), "at")
            try arguments.finish()
            guard (0...elements.count).contains(position) else {
                throw LumenError(.index, "cannot insert at \(position) in an array of \(elements.count)", at: location)
            }
            elements.insert(element, at: position)
            return .array(elements)
        case (.array(var elements), "remove"):
            let position = try arguments.integer(try arguments.requireLabelled("at"), "at")
            try arguments.finish()
            guard elements.indices.contains(position) else {
                throw LumenError(.index, "index \(position) is out of range for an array of \(elements.count)", at: location)
            }
            elements.remove(at: position)
            return .array(elements)
        case (.array(let elements), "removeLast"):
            try arguments.finish()
            guard !elements.isEmpty else { throw LumenError(.index, "removeLast() on an empty array", at: location) }
            return .array(Array(elements.dropLast()))
        case (.array, "removeAll"):
            try arguments.finish()
            return .array([])
        case (.string(let text), _):
            return try stringMethod(name, on: text, arguments: &arguments)
        default:
            throw LumenError(.type, "a \(receiver.typeName) has no method '\(name)'", at: location)
        }
    }

    private static func stringMethod(_ name: String, on text: String, arguments: inout Arguments) throws -> Value {
        switch name {
        case "uppercased", "lowercased", "trimmed":
            try arguments.finish()
            return .string(name == "uppercased" ? text.uppercased() : name == "lowercased" ? text.lowercased()
                           : text.trimmingCharacters(in: .whitespacesAndNewlines))
        case "contains", "hasPrefix", "hasSuffix":
            let other = try arguments.string(try arguments.requirePositional("other"), "other")
            try arguments.finish()
            return .bool(name == "contains" ? text.contains(other) : name == "hasPrefix" ? text.hasPrefix(other) : text.hasSuffix(other))
        case "split":
            let separator = try arguments.nextPositional().map { argument throws(LumenError) in try arguments.string(argument, "separator") }
            try arguments.finish()
            let parts = separator.map { text.components(separatedBy: $0).filter { !$0.isEmpty } }
                ?? text.split(whereSeparator: \.isWhitespace).map(String.init)
            return .array(parts.map { .string($0) })
        case "replacing":
            let target = try arguments.string(try arguments.requirePositional("target"), "target")
            let replacement = try arguments.string(try arguments.requireLabelled("with"), "with")
            try arguments.finish()
            return .string(text.replacingOccurrences(of: target, with: replacement))
        default:
            throw LumenError(.type, "a String has no method '\(name)'", at: arguments.callLocation)
        }
    }

    /// `elements` in ascending order, or by `order(a, b)` (true when a comes first). Merge sort,
    /// since the comparison may call back into Lumen code.
    static func sort(_ elements: [Value], by order: Value?, context: Builtin.Context) async throws -> [Value] {
        guard elements.count > 1 else { return elements }
        let middle = elements.count / 2
        let left = try await sort(Array(elements[..<middle]), by: order, context: context)
        let right = try await sort(Array(elements[middle...]), by: order, context: context)
        var merged: [Value] = []
        merged.reserveCapacity(elements.count)
        var (i, j) = (0, 0)
        while i < left.count && j < right.count {
            try Task.checkCancellation()
            let rightFirst: Bool
            if let order {
                let answer = try await context.call(order, [right[j], left[i]])
                guard case .bool(let flag) = answer else {
                    throw LumenError(.type, "the sort closure must return a Bool, not \(answer.typeName)", at: context.location)
                }
                rightFirst = flag
            } else {
                rightFirst = try Operators.binary("<", right[j], left[i], at: context.location).equals(.bool(true))
            }
            if rightFirst { merged.append(right[j]); j += 1 } else { merged.append(left[i]); i += 1 }
        }
        return merged + left[i...] + right[j...]
    }
}

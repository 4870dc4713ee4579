import Foundation

/// Properties and methods of Lumen's value types (`xs.count`, `s.split(" ")`, `xs.map { … }`).
enum Methods {
    /// Methods that change their receiver: the call's result is stored back into the receiver's
    /// variable, so collections keep Swift's value semantics.
    static let mutating: Set<String> = ["append", "insert", "remove", "removeLast", "removeAll"]

    /// A property: its value, from the receiver.
    typealias Property = @Sendable (_ receiver: Value) -> Value
    /// A method: its result, from the receiver and the call's arguments.
    typealias Method = @Sendable (_ receiver: Value, _ arguments: inout Arguments, _ context: Builtin.Context) async throws -> Value

    /// One value type's properties and methods, by name.
    struct Members: Sendable {
        let properties: [String: Property]
        let methods: [String: Method]

        /// Every member's name, sorted: what completion offers and error messages list.
        var names: [String] { (Array(properties.keys) + Array(methods.keys)).sorted() }
    }

    /// The members of each value type, by type name: the one list of them, which member access,
    /// calls, completion and error messages all read.
    static let members: [String: Members] = [
        "Array": Members(properties: collectionProperties.merging(["first": { $0.arrayElements.first ?? .null },
                                                                   "last": { $0.arrayElements.last ?? .null }]) { old, _ in old },
                         methods: arrayMethods),
        // A range's methods are its elements' (as an array).
        "Range": Members(properties: collectionProperties,
                         methods: arrayMethods.filter { ["contains", "filter", "map", "reduce", "reversed"].contains($0.key) }),
        "String": Members(properties: collectionProperties, methods: stringMethods),
        "Dictionary": Members(properties: collectionProperties.merging(["keys": { .array($0.dictionaryPairs.map(\.key)) },
                                                                        "values": { .array($0.dictionaryPairs.map(\.value)) }]) { old, _ in old },
                              methods: [:]),
    ]

    /// `count` and `isEmpty`, which every collection has.
    private static let collectionProperties: [String: Property] = [
        "count": { .integer($0.collectionCount) },
        "isEmpty": { .bool($0.collectionCount == 0) },
    ]

    /// `value.name`: a property's value, or a method waiting for its call.
    static func member(_ name: String, of value: Value, at location: SourceLocation) throws -> Value {
        if case .host(let object) = value {
            let members = object.members
            let property: Value?
            do {
                property = try members.property(name)
            } catch var error as LumenError {
                error.location = error.location ?? location
                throw error
            } catch {
                throw LumenError(.model, "\(error)", at: location)
            }
            if let property { return property }
            guard members.method(name) != nil else {
                let known = members.names.joined(separator: ", ")
                throw LumenError(.type, "a \(object.typeName) has no member '\(name)': it has \(known)", at: location)
            }
            return .method(value, name)
        }
        let found = members[value.typeName]
        if let property = found?.properties[name] { return property(value) }
        guard found?.methods[name] != nil else {
            let known = found.map { ": it has " + $0.names.joined(separator: ", ") } ?? ""
            throw LumenError(.type, "a \(value.typeName) has no member '\(name)'\(known)", at: location)
        }
        return .method(value, name)
    }

    /// Calls method `name` on `receiver`.
    static func call(_ name: String, on receiver: Value, arguments: inout Arguments, context: Builtin.Context) async throws -> Value {
        if case .host(let object) = receiver, let builtin = object.members.method(name) {
            var withReceiver = arguments.prepending(receiver, at: context.location, knownLabels: builtin.labels)
            return try await builtin.body(&withReceiver, context)
        }
        guard let method = members[receiver.typeName]?.methods[name] else {
            throw LumenError(.type, "a \(receiver.typeName) has no method '\(name)'", at: context.location)
        }
        let elements: Value = if case .range = receiver { .array(try Operators.elements(of: receiver, at: context.location)) } else { receiver }
        return try await method(elements, &arguments, context)
    }

    /// The array methods, each given the receiver as an array.
    private static let arrayMethods: [String: Method] = [
        "map": { receiver, arguments, context in
            let function = try arguments.requirePositional("transform").0
            try arguments.finish()
            var results: [Value] = []
            for element in receiver.arrayElements {
                try Task.checkCancellation()
                results.append(try await context.call(function, [element]))
            }
            return .array(results)
        },
        "filter": { receiver, arguments, context in
            let function = try arguments.requirePositional("isIncluded").0
            try arguments.finish()
            var results: [Value] = []
            for element in receiver.arrayElements {
                try Task.checkCancellation()
                let keep = try await context.call(function, [element])
                guard case .bool(let flag) = keep else {
                    throw LumenError(.type, "filter's closure must return a Bool, not \(keep.typeName)", at: context.location)
                }
                if flag { results.append(element) }
            }
            return .array(results)
        },
        "reduce": { receiver, arguments, context in
            var accumulator = try arguments.requirePositional("initial").0
            let function = try arguments.requirePositional("combine").0
            try arguments.finish()
            for element in receiver.arrayElements {
                try Task.checkCancellation()
                accumulator = try await context.call(function, [accumulator, element])
            }
            return accumulator
        },
        "sorted": { receiver, arguments, context in
            let order = arguments.nextPositional()?.0 ?? arguments.labelled("by")?.0
            try arguments.finish()
            return .array(try await sort(receiver.arrayElements, by: order, context: context))
        },
        "enumerated": { receiver, arguments, _ in
            try arguments.finish()
            return .array(receiver.arrayElements.enumerated().map { .array([.integer($0.offset), $0.element]) })
        },
        "reversed": { receiver, arguments, _ in
            try arguments.finish()
            return .array(receiver.arrayElements.reversed())
        },
        "contains": { receiver, arguments, _ in
            let element = try arguments.requirePositional("element").0
            try arguments.finish()
            return .bool(receiver.arrayElements.contains { $0.equals(element) })
        },
        "firstIndex": { receiver, arguments, _ in
            let element = try arguments.requireLabelled("of").0
            try arguments.finish()
            return receiver.arrayElements.firstIndex { $0.equals(element) }.map { .integer($0) } ?? .null
        },
        "joined": { receiver, arguments, _ in
            let separator = try arguments.labelledString("separator") ?? ""
            try arguments.finish()
            return .string(receiver.arrayElements.map(\.printed).joined(separator: separator))
        },
        "zip": { receiver, arguments, _ in
            let other = try arguments.requirePositional("other")
            try arguments.finish()
            return .array(zip(receiver.arrayElements, try Operators.elements(of: other.0, at: other.1)).map { .array([$0, $1]) })
        },
        "min": { receiver, arguments, context in
            try arguments.finish()
            return try await sort(receiver.arrayElements, by: nil, context: context).first ?? .null
        },
        "max": { receiver, arguments, context in
            try arguments.finish()
            return try await sort(receiver.arrayElements, by: nil, context: context).last ?? .null
        },
        "append": { receiver, arguments, _ in
            let element = try arguments.requirePositional("element").0
            try arguments.finish()
            return .array(receiver.arrayElements + [element])
        },
        "insert": { receiver, arguments, context in
            var elements = receiver.arrayElements
            let element = try arguments.requirePositional("element").0
            let position = try arguments.integer(try arguments.requireLabelled("at"), "at")
            try arguments.finish()
            guard (0...elements.count).contains(position) else {
                throw LumenError(.index, "cannot insert at \(position) in an array of \(elements.count)", at: context.location)
            }
            elements.insert(element, at: position)
            return .array(elements)
        },
        "remove": { receiver, arguments, context in
            var elements = receiver.arrayElements
            let position = try arguments.integer(try arguments.requireLabelled("at"), "at")
            try arguments.finish()
            guard elements.indices.contains(position) else {
                throw LumenError(.index, "index \(position) is out of range for an array of \(elements.count)", at: context.location)
            }
            elements.remove(at: position)
            return .array(elements)
        },
        "removeLast": { receiver, arguments, context in
            try arguments.finish()
            guard !receiver.arrayElements.isEmpty else { throw LumenError(.index, "removeLast() on an empty array", at: context.location) }
            return .array(Array(receiver.arrayElements.dropLast()))
        },
        "removeAll": { _, arguments, _ in
            try arguments.finish()
            return .array([])
        },
    ]

    /// The string methods.
    private static let stringMethods: [String: Method] = [
        "uppercased": { receiver, arguments, _ in
            try arguments.finish()
            return .string(receiver.stringText.uppercased())
        },
        "lowercased": { receiver, arguments, _ in
            try arguments.finish()
            return .string(receiver.stringText.lowercased())
        },
        "trimmed": { receiver, arguments, _ in
            try arguments.finish()
            return .string(receiver.stringText.trimmingCharacters(in: .whitespacesAndNewlines))
        },
        "contains": { receiver, arguments, _ in
            let other = try arguments.string(try arguments.requirePositional("other"), "other")
            try arguments.finish()
            return .bool(receiver.stringText.contains(other))
        },
        "hasPrefix": { receiver, arguments, _ in
            let other = try arguments.string(try arguments.requirePositional("other"), "other")
            try arguments.finish()
            return .bool(receiver.stringText.hasPrefix(other))
        },
        "hasSuffix": { receiver, arguments, _ in
            let other = try arguments.string(try arguments.requirePositional("other"), "other")
            try arguments.finish()
            return .bool(receiver.stringText.hasSuffix(other))
        },
        "split": { receiver, arguments, _ in
            let text = receiver.stringText
            let separator = try arguments.nextPositional().map { argument throws(LumenError) in try arguments.string(argument, "separator") }
            try arguments.finish()
            let parts = separator.map { text.components(separatedBy: $0).filter { !$0.isEmpty } }
                ?? text.split(whereSeparator: \.isWhitespace).map(String.init)
            return .array(parts.map { .string($0) })
        },
        "replacing": { receiver, arguments, _ in
            let target = try arguments.string(try arguments.requirePositional("target"), "target")
            let replacement = try arguments.string(try arguments.requireLabelled("with"), "with")
            try arguments.finish()
            return .string(receiver.stringText.replacingOccurrences(of: target, with: replacement))
        },
    ]

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

/// The parts of a receiver the member table's entries read; each entry is only called on a value
/// of its own type, so the fallbacks are never taken.
private extension Value {
    var arrayElements: [Value] {
        if case .array(let elements) = self { elements } else { [] }
    }
    var stringText: String {
        if case .string(let text) = self { text } else { "" }
    }
    var dictionaryPairs: [(key: Value, value: Value)] {
        if case .dictionary(let dictionary) = self { dictionary.pairs.map { (key: $0.key, value: $0.value) } } else { [] }
    }
    /// Elements, characters, pairs or integers in the range.
    var collectionCount: Int {
        switch self {
        case .array(let elements): elements.count
        case .string(let text): text.count
        case .dictionary(let dictionary): dictionary.count
        case .range(let lower, let upper): upper - lower
        default: 0
        }
    }
}

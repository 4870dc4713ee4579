import Synchronization

/// A user function or closure: parameters, body and the scope it was created in.
public final class Function: Sendable {
    /// The name (`closure` for closures).
    public let name: String
    /// Parameters and body.
    public let closure: Closure
    /// The scope the function captured.
    let scope: Scope
    /// The cell the function was written in, for tracebacks.
    let source: SourceText

    init(name: String, closure: Closure, scope: Scope, source: SourceText) {
        self.name = name
        self.closure = closure
        self.scope = scope
        self.source = source
    }

    /// The signature, as help shows it.
    public var signature: String {
        let parameters = closure.parameters.map { parameter in
            (parameter.label.map { "\($0): " } ?? "") + parameter.name + (parameter.defaultValue == nil ? "" : " = …")
        }
        return "func \(name)(\(parameters.joined(separator: ", ")))"
    }
}

/// A level of variables: the globals of a session, or the locals of one call or block.
/// Closures keep the scopes they were created in, so it is shared and guarded by a mutex.
final class Scope: Sendable {
    struct Binding {
        var value: Value
        let constant: Bool
    }

    let parent: Scope?
    private let bindings = Mutex<[String: Binding]>([:])

    init(parent: Scope?) {
        self.parent = parent
    }

    /// The value of `name` here or in an enclosing scope.
    func lookup(_ name: String) -> Value? {
        bindings.withLock { $0[name]?.value } ?? parent?.lookup(name)
    }

    /// Declares `name` in this scope.
    func declare(_ name: String, _ value: Value, constant: Bool) {
        bindings.withLock { $0[name] = Binding(value: value, constant: constant) }
    }

    /// Where `name` is declared.
    enum AssignmentResult {
        case assigned, constant, undeclared
    }

    /// Assigns to the innermost declaration of `name`.
    func assign(_ name: String, _ value: Value) -> AssignmentResult {
        let result: AssignmentResult? = bindings.withLock { bindings in
            guard let binding = bindings[name] else { return nil }
            guard !binding.constant else { return .constant }
            bindings[name]?.value = value
            return .assigned
        }
        return result ?? parent?.assign(name, value) ?? .undeclared
    }

    /// Every name visible from this scope: its own and its parents'.
    var visibleNames: Set<String> {
        bindings.withLock { Set($0.keys) }.union(parent?.visibleNames ?? [])
    }

    /// The names declared in this scope, with their values.
    var names: [String: Value] {
        bindings.withLock { $0.mapValues(\.value) }
    }

    /// Forgets everything declared here.
    func removeAll() {
        bindings.withLock { $0.removeAll() }
    }
}

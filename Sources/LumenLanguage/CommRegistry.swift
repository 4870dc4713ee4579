import Evaluation
import Synchronization

/// Something of the session with a counterpart in the front end, the two joined by a comm: a
/// widget, whose value the front end changes and the session reads and sets.
public protocol CommEndpoint: AnyObject, Sendable {
    /// A message from the front end on this endpoint's comm (a new value, a click, the comm
    /// closed); what it causes is published through `context`, whose output has the message as
    /// parent, and Lumen functions (callbacks) are called through `context.call`.
    func receive(_ message: CommMessage, context: Builtin.Context) async
}

/// The comms open in a session, by id: where the front end's messages go. Any task reads and
/// changes it: cells, subshells' cells and comm messages run at once.
final class CommRegistry: Sendable {
    private let open = Mutex<[String: (target: String, endpoint: any CommEndpoint)]>([:])

    /// Records `endpoint` as the session's side of comm `id`, opened for `target`.
    func add(_ endpoint: any CommEndpoint, id: String, target: String) {
        open.withLock { $0[id] = (target, endpoint) }
    }

    /// The endpoint of comm `id`, if it is open.
    func endpoint(_ id: String) -> (any CommEndpoint)? {
        open.withLock { $0[id]?.endpoint }
    }

    /// Forgets comm `id`.
    func remove(_ id: String) {
        open.withLock { _ = $0.removeValue(forKey: id) }
    }

    /// The open comms (id → target), those of `target` only when given.
    func targets(of target: String?) -> [String: String] {
        open.withLock { open in
            open.compactMapValues { entry in target == nil || entry.target == target ? entry.target : nil }
        }
    }
}

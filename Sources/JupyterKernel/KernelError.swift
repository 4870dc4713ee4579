import Foundation

/// Errors that stop the kernel from starting or running.
public enum KernelError: Error, CustomStringConvertible {
    /// A system call failed with `errno`.
    case system(String, Int32)
    /// A socket could not be set up.
    case channel(name: String, reason: String)

    public var description: String {
        switch self {
        case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        case .channel(let name, let reason): "\(name) channel: \(reason)"
        }
    }
}

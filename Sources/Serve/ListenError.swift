import Foundation

/// Why `lumen serve` could not start listening, in words a user can act on.
public struct ListenError: Error, CustomStringConvertible {
    public let description: String

    /// The error for `errno` when binding `host:port`, if it is one worth explaining.
    init?(errno code: Int32, host: String, port: Int) {
        let place = "\(host):\(port)"
        switch code {
        case EADDRINUSE: description = "port \(port) is in use (\(place)): stop what holds it, or choose another --port (0 picks a free one)"
        case EACCES: description = "no permission to listen on port \(port) (\(place)): ports below 1024 need privileges; choose another --port"
        case EADDRNOTAVAIL: description = "\(host) is not an address of this machine (\(place)); choose another --host"
        default: return nil
        }
    }
}

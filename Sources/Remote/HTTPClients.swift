import AsyncHTTPClient
import NIOCore
import Synchronization

/// The process's HTTP clients, one per read timeout, shared by every remote model (each keeps a
/// pool of connections); they live as long as the process.
final class HTTPClients: Sendable {
    static let shared = HTTPClients()

    private struct Timeouts: Hashable {
        let connect: Double
        let read: Double
    }

    private let clients = Mutex<[Timeouts: HTTPClient]>([:])

    /// The client whose connections give up after `readTimeout` seconds without a byte, and
    /// after `connectTimeout` seconds trying to connect.
    func client(connectTimeout: Double, readTimeout: Double) -> HTTPClient {
        let key = Timeouts(connect: connectTimeout, read: readTimeout)
        return clients.withLock { clients in
            if let client = clients[key] { return client }
            var configuration = HTTPClient.Configuration()
            configuration.timeout = .init(connect: .milliseconds(Int64(connectTimeout * 1000)), read: .milliseconds(Int64(readTimeout * 1000)))
            configuration.decompression = .disabled
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[key] = client
            return client
        }
    }
}

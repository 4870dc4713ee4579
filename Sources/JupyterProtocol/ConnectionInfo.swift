import Foundation

/// The connection file Jupyter writes for a kernel: where to bind its five sockets and how to
/// sign messages.
public struct ConnectionInfo: Sendable, Codable, Equatable {
    /// `tcp` or `ipc`.
    public var transport: String
    /// The address to bind (for `ipc`, the path prefix).
    public var ip: String
    /// Port of the shell ROUTER socket.
    public var shellPort: Int
    /// Port of the IOPub PUB socket.
    public var iopubPort: Int
    /// Port of the stdin ROUTER socket.
    public var stdinPort: Int
    /// Port of the control ROUTER socket.
    public var controlPort: Int
    /// Port of the heartbeat REP socket.
    public var heartbeatPort: Int
    /// The HMAC key; empty means no signing.
    public var key: String
    /// The signature scheme; only `hmac-sha256` is supported.
    public var signatureScheme: String
    /// The kernel name the client used, if it says.
    public var kernelName: String?

    enum CodingKeys: String, CodingKey {
        case transport, ip, key
        case shellPort = "shell_port"
        case iopubPort = "iopub_port"
        case stdinPort = "stdin_port"
        case controlPort = "control_port"
        case heartbeatPort = "hb_port"
        case signatureScheme = "signature_scheme"
        case kernelName = "kernel_name"
    }

    /// Creates connection info from its fields.
    public init(
        transport: String = "tcp", ip: String = "127.0.0.1",
        shellPort: Int, iopubPort: Int, stdinPort: Int, controlPort: Int, heartbeatPort: Int,
        key: String, signatureScheme: String = MessageSigner.supportedScheme, kernelName: String? = nil
    ) {
        self.transport = transport
        self.ip = ip
        self.shellPort = shellPort
        self.iopubPort = iopubPort
        self.stdinPort = stdinPort
        self.controlPort = controlPort
        self.heartbeatPort = heartbeatPort
        self.key = key
        self.signatureScheme = signatureScheme
        self.kernelName = kernelName
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        transport = try container.decodeIfPresent(String.self, forKey: .transport) ?? "tcp"
        ip = try container.decode(String.self, forKey: .ip)
        shellPort = try container.decode(Int.self, forKey: .shellPort)
        iopubPort = try container.decode(Int.self, forKey: .iopubPort)
        stdinPort = try container.decode(Int.self, forKey: .stdinPort)
        controlPort = try container.decode(Int.self, forKey: .controlPort)
        heartbeatPort = try container.decode(Int.self, forKey: .heartbeatPort)
        key = try container.decodeIfPresent(String.self, forKey: .key) ?? ""
        signatureScheme = try container.decodeIfPresent(String.self, forKey: .signatureScheme) ?? MessageSigner.supportedScheme
        kernelName = try container.decodeIfPresent(String.self, forKey: .kernelName)
    }

    /// Reads and validates the connection file at `path`.
    public static func load(from path: String) throws(ConnectionFileError) -> ConnectionInfo {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadable(path: path, reason: error.localizedDescription)
        }
        return try parse(data, path: path)
    }

    /// Parses and validates connection-file JSON; `path` only names the source in errors.
    public static func parse(_ data: Data, path: String) throws(ConnectionFileError) -> ConnectionInfo {
        let info: ConnectionInfo
        do {
            info = try JSONDecoder().decode(ConnectionInfo.self, from: data)
        } catch DecodingError.keyNotFound(let key, _) {
            throw .invalid(path: path, field: key.stringValue, reason: "is missing")
        } catch DecodingError.typeMismatch(_, let context) where !context.codingPath.isEmpty {
            throw .invalid(path: path, field: context.codingPath.map(\.stringValue).joined(separator: "."), reason: "has the wrong type")
        } catch {
            throw .invalid(path: path, field: "(file)", reason: "is not a JSON object")
        }
        try info.validate(path: path)
        return info
    }

    private func validate(path: String) throws(ConnectionFileError) {
        guard transport == "tcp" || transport == "ipc" else {
            throw .invalid(path: path, field: "transport", reason: "must be \"tcp\" or \"ipc\", not \"\(transport)\"")
        }
        guard key.isEmpty || signatureScheme == MessageSigner.supportedScheme else {
            throw .invalid(path: path, field: "signature_scheme", reason: "\"\(signatureScheme)\" is not supported (use \(MessageSigner.supportedScheme))")
        }
        let ports = [("shell_port", shellPort), ("iopub_port", iopubPort), ("stdin_port", stdinPort),
                     ("control_port", controlPort), ("hb_port", heartbeatPort)]
        for (name, port) in ports where !(0...65535).contains(port) {
            throw .invalid(path: path, field: name, reason: "\(port) is not a port number")
        }
    }

    /// The ZeroMQ endpoint for `port`; port 0 asks for any free port (tcp only).
    public func endpoint(port: Int) -> String {
        if transport == "ipc" { return "ipc://\(ip)-\(port)" }
        let host = ip.contains(":") ? "[\(ip)]" : ip
        return "tcp://\(host):\(port == 0 ? "*" : String(port))"
    }
}

/// Why a connection file could not be used.
public enum ConnectionFileError: Error, Equatable, CustomStringConvertible {
    /// The file could not be read.
    case unreadable(path: String, reason: String)
    /// The file was read but a field is missing or wrong.
    case invalid(path: String, field: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read connection file \(path): \(reason)"
        case .invalid(let path, let field, let reason): "connection file \(path): \(field) \(reason)"
        }
    }
}

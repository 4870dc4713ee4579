import Foundation
import Testing
@testable import JupyterProtocol

@Suite("Connection files")
struct ConnectionInfoTests {
    let validFile = """
    {"shell_port": 5001, "iopub_port": 5002, "stdin_port": 5003, "control_port": 5004, "hb_port": 5005,
     "ip": "127.0.0.1", "key": "abc", "transport": "tcp", "signature_scheme": "hmac-sha256", "kernel_name": "lumen"}
    """

    func parse(_ text: String) throws(ConnectionFileError) -> ConnectionInfo {
        try ConnectionInfo.parse(Data(text.utf8), path: "kernel-1.json")
    }

    @Test("a complete file parses and gives endpoints")
    func parsesValidFile() throws {
        let info = try parse(validFile)
        #expect(info.shellPort == 5001 && info.heartbeatPort == 5005 && info.key == "abc")
        #expect(info.endpoint(port: info.shellPort) == "tcp://127.0.0.1:5001")
        #expect(info.endpoint(port: 0) == "tcp://127.0.0.1:*")
        var ipc = info
        ipc.transport = "ipc"
        ipc.ip = "/tmp/kernel"
        #expect(ipc.endpoint(port: 3) == "ipc:///tmp/kernel-3")
        var ipv6 = info
        ipv6.ip = "::1"
        #expect(ipv6.endpoint(port: 9) == "tcp://[::1]:9")
    }

    @Test("errors name the file and the field")
    func errors() {
        let cases: [(String, ConnectionFileError)] = [
            (validFile.replacingOccurrences(of: #""hb_port": 5005,"#, with: ""),
             .invalid(path: "kernel-1.json", field: "hb_port", reason: "is missing")),
            (validFile.replacingOccurrences(of: #""shell_port": 5001"#, with: #""shell_port": "x""#),
             .invalid(path: "kernel-1.json", field: "shell_port", reason: "has the wrong type")),
            (validFile.replacingOccurrences(of: #""transport": "tcp""#, with: #""transport": "udp""#),
             .invalid(path: "kernel-1.json", field: "transport", reason: "must be \"tcp\" or \"ipc\", not \"udp\"")),
            (validFile.replacingOccurrences(of: "hmac-sha256", with: "hmac-md5"),
             .invalid(path: "kernel-1.json", field: "signature_scheme", reason: "\"hmac-md5\" is not supported (use hmac-sha256)")),
            (validFile.replacingOccurrences(of: "5003", with: "70000"),
             .invalid(path: "kernel-1.json", field: "stdin_port", reason: "70000 is not a port number")),
            ("[1, 2]", .invalid(path: "kernel-1.json", field: "(file)", reason: "is not a JSON object")),
        ]
        for (text, expected) in cases {
            #expect(throws: expected) { try parse(text) }
        }
    }

    @Test("an unreadable file names its path")
    func unreadable() {
        do {
            _ = try ConnectionInfo.load(from: "/nonexistent/kernel.json")
            Issue.record("loaded a missing file")
        } catch {
            #expect(error.description.contains("/nonexistent/kernel.json"))
        }
    }
}

@Suite("Message contents")
struct MessageContentTests {
    @Test("execute_request fields take the protocol's defaults")
    func executeDefaults() throws {
        let request = try JSONDecoder().decode(ExecuteRequest.self, from: Data(#"{"code": "1", "silent": true}"#.utf8))
        #expect(request.silent && !request.storeHistory && request.allowStdin && request.stopOnError)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ExecuteRequest.self, from: Data(#"{"silent": true}"#.utf8))
        }
    }

    @Test("execute replies carry only the fields of their status")
    func executeReplies() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        func json(_ reply: ExecuteReply) throws -> String { String(decoding: try encoder.encode(reply), as: UTF8.self) }
        #expect(try json(.aborted(executionCount: 3)) == #"{"execution_count":3,"status":"aborted"}"#)
        #expect(try json(.ok(executionCount: 1)) == #"{"execution_count":1,"payload":[],"status":"ok","user_expressions":{}}"#)
        let error = try json(.error(executionCount: 2, ErrorContent(ename: "E", evalue: "v", traceback: ["t"])))
        #expect(error == #"{"ename":"E","evalue":"v","execution_count":2,"status":"error","traceback":["t"]}"#)
    }
}

import Courier
import CourierDigest
import CourierTestServer
import CourierTesting
import Foundation
import HTTPTypes

/// The few test-server endpoints the conformance cases use, answered by a script: the scripted
/// transport's stand-in for the server, so that the same cases run against it.
enum ScriptedServer {
    @Sendable static func answer(_ sent: ScriptedTransport.Sent) -> ScriptedTransport.Reply {
        let url = sent.request.url
        let path = url.path
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        func value(_ name: String) -> String? { query.first { $0.name == name }?.value }
        if path.hasPrefix("/anything") {
            var headers: [String: String] = [:]
            for field in sent.request.headerFields {
                // As a server reads HTTP/1.1: cookie crumbs on one line, other repeats joined with ",".
                let name = field.name.rawName
                let separator = field.name == .cookie ? "; " : ","
                headers[name] = headers[name].map { $0 + separator + field.value } ?? field.value
            }
            let document: [String: Any] = [
                "method": sent.request.method.rawValue, "headers": headers,
                "data": String(decoding: sent.body, as: UTF8.self),
            ]
            return sent.request.method == .head ? .status(200) : json(document)
        }
        if path == "/upload" {
            let digest = SHA256.hash(data: sent.body).hexString
            return json(["bytes": sent.body.count, "sha256": digest, "method": sent.request.method.rawValue])
        }
        let parts = path.split(separator: "/")
        if parts.count == 2, parts[0] == "bytes" || parts[0] == "stream-bytes", let count = Int(parts[1]) {
            let seed = UInt64(value("seed") ?? "") ?? 0
            return .status(
                200, headers: [("Content-Type", "application/octet-stream")],
                body: Data(TestServer.expectedBytes(count: count, seed: seed)))
        }
        if parts.count == 2, parts[0] == "delay", let seconds = Double(parts[1]) {
            return json(["delayed": seconds]).delayed(by: .milliseconds(Int(seconds * 1000)))
        }
        if parts.count == 2, parts[0] == "status", let status = Int(parts[1]) {
            return .status(status)
        }
        if path == "/fault/never-answer" {
            let milliseconds = Int(value("max_ms") ?? "") ?? 30_000
            return .status(200).delayed(by: .milliseconds(milliseconds))
        }
        if path == "/response-headers" {
            return .status(
                200, headers: query.map { ($0.name, $0.value ?? "") },
                body: Data(#"{"response-headers":true}"#.utf8))
        }
        return .status(404)
    }

    private static func json(_ document: [String: Any]) -> ScriptedTransport.Reply {
        let data = (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])) ?? Data()
        return .status(200, headers: [("Content-Type", "application/json")], body: data)
    }
}

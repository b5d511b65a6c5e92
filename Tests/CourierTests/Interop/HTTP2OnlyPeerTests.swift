import Courier
import CourierDigest
import Foundation
import NIOCore
import NIOSSL
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

/// Courier against a server that speaks only HTTP/2, written on python-h2 rather than with
/// Courier's own assumptions (`.ci/h2only.sh`, `.ci/h2only_server.py`: ALPN `h2` alone, HTTP/2
/// on every connection, each request answered with its body's length and SHA-256).
///
/// Reads `COURIER_H2ONLY_URL` and `COURIER_H2ONLY_CA`; without them the suite is skipped, except
/// when `CI=true`, where a missing server is a failure.
@Suite("Interop with an HTTP/2-only server (python-h2)", .serialized, .timeLimit(.minutes(3)))
struct HTTP2OnlyPeerTests {
    static let peer: (url: URL, caFile: String)? = {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["COURIER_H2ONLY_URL"].flatMap(URL.init(string:)),
            let caFile = environment["COURIER_H2ONLY_CA"]
        else { return nil }
        return (url, caFile)
    }()

    func withPeer(allowsHTTP2: Bool = true, _ body: (URL, SessionManager) async throws -> Void) async throws {
        guard let peer = Self.peer else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("CI=true but COURIER_H2ONLY_URL is not set (.ci/h2only.sh)")
            }
            return
        }
        try #require(peer.url.host == "localhost" || peer.url.host == "127.0.0.1", "the peer must be on loopback")
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(peer.caFile)
        var configuration = AsyncHTTPClientTransport.Configuration()
        configuration.tlsConfiguration = tls
        configuration.allowsHTTP2 = allowsHTTP2
        configuration.connectTimeout = .seconds(60)
        let transport = AsyncHTTPClientTransport(configuration: configuration)
        let manager = SessionManager(transport: transport)
        do {
            try await body(peer.url, manager)
        } catch {
            Issue.record(error)
        }
        try await manager.shutdown()
        try await transport.shutdown()
    }

    /// POST, PUT and PATCH bodies of 1 KB and 3 MB, in memory, from a file and streamed, arrive
    /// intact over HTTP/2, and a GET beside them.
    @Test func bodiesOfEveryMethodArriveIntact() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-h2peer-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withPeer { url, manager in
            for method in [HTTPMethod.post, .put, .patch] {
                for size in [1_000, 3_000_000] {
                    let payload = patternData(count: size)
                    let file = directory.appendingPathComponent("\(size).bin")
                    try payload.write(to: file)
                    for body in [
                        RequestBody.data(payload),
                        try .file(file),
                        .oneShotStream(
                            length: nil,
                            AsyncStream<ByteBuffer> { continuation in
                                continuation.yield(ByteBuffer(bytes: payload))
                                continuation.finish()
                            }),
                    ] {
                        let response = try await manager.data(
                            for: Request(method: method, url: url.appendingPathComponent("upload"), body: body))
                        try Self.expectEcho(response, of: method, bytes: size, sha256: sha256Hex(payload))
                    }
                }
            }
            let get = try await manager.data(for: Request(url: url.appendingPathComponent("get")))
            #expect(get.response.status.code == 200)
        }
    }

    /// Done means, in part: 1,000 JSON POSTs, 16 at a time, over the one HTTP/2 connection this
    /// server keeps, all succeed, each answered with the length and digest of its own body.
    @Test func aThousandJSONPostsSixteenAtATimeAllSucceed() async throws {
        try await withPeer { url, manager in
            let lost = await JSONPostLoad.failures(to: url.appendingPathComponent("echo"), through: manager) {
                sent, answer in
                guard let echo = try? JSONSerialization.jsonObject(with: answer) as? [String: Any] else { return false }
                return echo["bytes"] as? Int == sent.count && echo["sha256"] as? String == sha256Hex(sent)
            }
            #expect(lost.isEmpty, "\(lost.count) of 1000 failed; first: \(lost.first ?? "")")
        }
    }

    /// Done means, in part: POST, PUT and PATCH bodies of 1 GiB, from a file and streamed, arrive
    /// intact. Six gibibytes through a Python server take minutes, so this runs only with
    /// `COURIER_H2ONLY_GIB=1` (`.ci/h2only-gib.sh`).
    @Test(
        .enabled(if: ProcessInfo.processInfo.environment["COURIER_H2ONLY_GIB"] == "1"), .timeLimit(.minutes(20)))
    func gibibyteBodiesOfEveryMethodArriveIntact() async throws {
        let size = 1 << 30
        let chunk = patternData(count: 1 << 20)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-h2peer-gib-\(UUID()).bin")
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: file) }
        let handle = try FileHandle(forWritingTo: file)
        var digest = SHA256()
        for _ in 0..<(size / chunk.count) {
            handle.write(chunk)
            digest.update(data: chunk)
        }
        try handle.close()
        let expected = digest.finalize().hexString
        try await withPeer { url, manager in
            for method in [HTTPMethod.post, .put, .patch] {
                let streamed = RequestBody.oneShotStream(
                    length: Int64(size),
                    AsyncStream<ByteBuffer> { continuation in
                        for _ in 0..<(size / chunk.count) { continuation.yield(ByteBuffer(bytes: chunk)) }
                        continuation.finish()
                    })
                for body in [try RequestBody.file(file), streamed] {
                    let response = try await manager.data(
                        for: Request(method: method, url: url.appendingPathComponent("upload"), body: body))
                    try Self.expectEcho(response, of: method, bytes: size, sha256: expected)
                }
            }
        }
    }

    /// Checks the peer's answer: over HTTP/2, the method it saw, and the length and SHA-256 of
    /// the body it read.
    static func expectEcho(
        _ response: SessionResponse, of method: HTTPMethod, bytes: Int, sha256: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(
            response.response.httpVersion == HTTPProtocolVersion(major: 2, minor: 0), sourceLocation: sourceLocation)
        let echo = try jsonObject(response.data, sourceLocation: sourceLocation)
        #expect(echo["method"] as? String == method.rawValue, sourceLocation: sourceLocation)
        #expect(echo["bytes"] as? Int == bytes, sourceLocation: sourceLocation)
        #expect(echo["sha256"] as? String == sha256, sourceLocation: sourceLocation)
    }

    /// With HTTP/2 refused, the request offers `http/1.1` alone; the server answers with HTTP/2
    /// anyway, and the error names both sides' protocols instead of blaming a closed connection.
    @Test func refusingHTTP2AgainstItNamesBothProtocols() async throws {
        try await withPeer(allowsHTTP2: false) { url, manager in
            let error = await #expect(throws: CourierError.self) {
                _ = try await manager.data(
                    for: Request(method: .post, url: url.appendingPathComponent("echo"), body: .data(Data("a=1".utf8))))
            }
            #expect(error?.code == .connectionFailed)
            let message = error?.message ?? ""
            // The peer closes on the HTTP/1.1 bytes it cannot parse; when its reset overtakes its
            // own connection preface, the kernel drops the unread preface and nothing is left to
            // recognise (seen once in a full CI run). A plain reset is then all the client knows.
            withKnownIssue("the peer's reset overtook its HTTP/2 preface", isIntermittent: true) {
                #expect(
                    message.contains("speaks only HTTP/2") && message.contains("http/1.1"),
                    "\(message) \(String(describing: error?.underlyingError))")
            } matching: { _ in
                message.contains("reset the connection")
            }
        }
    }
}

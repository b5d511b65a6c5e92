import Courier
import CourierTestServer
import Foundation
import NIOCore
import Testing

@testable import CourierCore

/// A transport that has been shut down refuses every send with a typed error, on each of its
/// paths, rather than leaving the caller waiting: AsyncHTTPClient fails such a request without
/// telling its delegate, so the delegate path has to watch for it itself.
@Suite("Transport: sends after shutdown", .timeLimit(.minutes(3)))
struct TransportShutdownTests {
    @Test func everyPathRefusesASendAfterShutdown() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-shutdown-\(UUID()).bin")
        try Data(repeating: 7, count: 4096).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        try await TestServerHarness.withServer { server in
            let transport = AsyncHTTPClientTransport()
            // One exchange first, so the pools hold a live connection when the shutdown comes.
            let warm = try await transport.send(Request(url: server.url("/get")), context: ExchangeContext())
            for try await _ in warm.body {}
            try await transport.shutdown()

            let requests: [(String, Request)] = [
                ("GET, delegate path", Request(url: server.url("/get"))),
                (
                    "POST from memory, delegate path",
                    Request(method: .post, url: server.url("/post"), body: .data(Data("hello".utf8)))
                ),
                (
                    "POST from a file, sendfile path",
                    Request(method: .post, url: server.url("/post"), body: try .file(file))
                ),
                (
                    "POST from a stream, async path",
                    Request(
                        method: .post, url: server.url("/post"),
                        body: .stream(length: 5) {
                            AsyncStream<ByteBuffer> { continuation in
                                continuation.yield(ByteBuffer(string: "hello"))
                                continuation.finish()
                            }
                        })
                ),
            ]
            for (name, request) in requests {
                let error = await expectCode(.transportFailed) {
                    try await transport.send(request, context: ExchangeContext())
                }
                #expect(error != nil, "\(name)")
            }
        }
    }
}

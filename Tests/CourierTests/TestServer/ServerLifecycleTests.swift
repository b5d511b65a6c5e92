import AsyncHTTPClient
import CourierTestServer
import NIOCore
import NIOHTTP1
import Testing

@Suite("Test server: lifecycle and protocol details", .timeLimit(.minutes(3)))
struct ServerLifecycleTests {
    @Test func runUntilCancelledServesThenStops() async throws {
        let server = try await TestServer.start()
        let running = Task { try await server.runUntilCancelled() }
        let reply = try await TestServerHarness.fetch(server, "/get")
        #expect(reply.status == .ok)
        running.cancel()
        try await running.value
        // A plain connect, refused at once: AsyncHTTPClient would retry refused connections
        // until the request's 30 s deadline, which made this the slowest test of the run.
        await #expect(throws: (any Error).self) {
            _ = try await TestServerHarness.rawExchange(server, "GET /get HTTP/1.1\r\nHost: a\r\n\r\n")
        }
    }

    @Test func shutdownTwiceIsHarmless() async throws {
        let server = try await TestServer.start()
        try await server.shutdown()
        try await server.shutdown()
    }

    @Test func expectContinueGetsAnInterimResponse() async throws {
        try await TestServerHarness.withServer { server async throws in
            let outcome = try await TestServerHarness.rawExchange(
                server,
                "POST /upload HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc"
            )
            #expect(outcome.text.hasPrefix("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"))
            #expect(outcome.text.contains("\"bytes\": 3"))
        }
    }

    @Test func contentLengthWithChunkedIsRejected() async throws {
        try await TestServerHarness.withServer { server async throws in
            let outcome = try await TestServerHarness.rawExchange(
                server,
                "POST /post HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
            )
            #expect(outcome.text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        }
    }

    @Test func http10GetsACloseDelimitedStream() async throws {
        try await TestServerHarness.withServer { server async throws in
            let outcome = try await TestServerHarness.rawExchange(server, "GET /stream-bytes/5?seed=2 HTTP/1.0\r\n\r\n")
            #expect(outcome.text.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(!outcome.text.contains("Transfer-Encoding"))
            #expect(outcome.text.contains("Connection: close\r\n"))
            #expect(Array(outcome.bytes.suffix(5)) == TestServer.expectedBytes(count: 5, seed: 2))
        }
    }

    @Test func headOnAStreamedEndpointSendsNoBody() async throws {
        try await TestServerHarness.withServer { server async throws in
            let reply = try await TestServerHarness.fetch(server, "/bytes/1000", method: .HEAD)
            #expect(reply.headers.first(name: "Content-Length") == "1000")
            #expect(reply.body.readableBytes == 0)
            // The connection stays usable after a HEAD.
            #expect(try await TestServerHarness.fetch(server, "/bytes/10").body.readableBytes == 10)
        }
    }

    @Test func recentHeadsKeepARedirectChain() async throws {
        try await TestServerHarness.withServer { server async throws in
            for path in ["/redirect/2", "/relative-redirect/1", "/get"] {
                _ = try await TestServerHarness.fetch(server, path, headers: [("Authorization", "Bearer x")])
            }
            let heads = server.stats.recentRequestHeads
            #expect(heads.map(\.uri) == ["/redirect/2", "/relative-redirect/1", "/get"])
            #expect(heads.allSatisfy { $0.value("authorization") == "Bearer x" })
            server.resetStats()
            #expect(server.stats.recentRequestHeads.isEmpty)
            #expect(server.stats.requestsServed == 0)
        }
    }

    @Test func uploadWithoutDigestStillCounts() async throws {
        try await TestServerHarness.withServer { server async throws in
            let json = try await TestServerHarness.fetch(
                server, "/upload?digest=none&parts=count", method: .PUT, body: [1, 2, 3]
            ).json()
            #expect(json["bytes"] == 3)
            #expect(json["sha256"] == .null)
            #expect(json["parts"] == nil)
            #expect(json["part_count"] == 0)
        }
    }
}

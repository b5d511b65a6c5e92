import AsyncHTTPClient
import CourierTestServer
import NIOCore
import NIOHTTP1
import Testing

@Suite("Test server: faults", .timeLimit(.minutes(3)))
struct FaultEndpointTests {
    @Test func closeMidResponseSendsAfterBytesThenCloses() async throws {
        try await TestServerHarness.withServer { server async throws in
            let outcome = try await TestServerHarness.rawExchange(
                server, "GET /fault/close-mid-response?after=500&total=2000 HTTP/1.1\r\nHost: a\r\n\r\n")
            let text = outcome.text
            let split = try #require(text.range(of: "\r\n\r\n"))
            #expect(text[..<split.lowerBound].contains("Content-Length: 2000"))
            #expect(text[split.upperBound...].utf8.count == 500)
            await #expect(throws: (any Error).self) {
                _ = try await TestServerHarness.fetch(server, "/fault/close-mid-response?after=500")
            }
        }
    }

    @Test func closeAfterRequestBytesCutsTheUpload() async throws {
        try await TestServerHarness.withServer { server async throws in
            await #expect(throws: (any Error).self) {
                _ = try await TestServerHarness.fetch(
                    server, "/fault/close-after-request-bytes?n=1000", method: .POST,
                    body: Array(repeating: 7, count: 4 * 1024 * 1024))
            }
            let short = try await TestServerHarness.fetch(
                server, "/fault/close-after-request-bytes?n=1000", method: .POST, body: Array(repeating: 7, count: 10))
            #expect(try short.json() == ["bytes": 10])
        }
    }

    @Test func wrongContentLengthShortBodyThenClose() async throws {
        try await TestServerHarness.withServer { server async throws in
            let outcome = try await TestServerHarness.rawExchange(
                server, "GET /fault/wrong-content-length?declared=100&actual=40 HTTP/1.1\r\nHost: a\r\n\r\n")
            let text = outcome.text
            let split = try #require(text.range(of: "\r\n\r\n"))
            #expect(text[..<split.lowerBound].contains("Content-Length: 100"))
            #expect(text[split.upperBound...].utf8.count == 40)
            await #expect(throws: (any Error).self) {
                _ = try await TestServerHarness.fetch(server, "/fault/wrong-content-length?declared=100&actual=40")
            }
        }
    }

    @Test func neverAnswerHitsTheClientReadTimeout() async throws {
        try await TestServerHarness.withServer { server async throws in
            var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
            // Long enough that a loaded machine has parsed the request before the client gives up on the answer.
            configuration.timeout = .init(connect: .seconds(10), read: .seconds(3))
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            await #expect(throws: (any Error).self) {
                _ = try await TestServerHarness.fetch(server, "/fault/never-answer", client: client)
            }
            try await client.shutdown()
            // The client gives up on its own clock, not on the server's: on a loaded machine the
            // server may still be parsing the head, so wait for it with a bound.
            let stats = try await server.stats(when: { $0.requestsReceived >= 1 })
            #expect(stats.requestsReceived == 1)
            #expect(stats.requestsServed == 0)
        }
    }

    @Test func truncatedChunkedHasNoTerminalChunk() async throws {
        try await TestServerHarness.withServer { server async throws in
            let outcome = try await TestServerHarness.rawExchange(
                server, "GET /fault/truncated-chunked?chunks=2&size=16 HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(outcome.text.contains("Transfer-Encoding: chunked\r\n"))
            #expect(outcome.text.hasSuffix("10\r\nqrstuvwxyzabcdef\r\n"))
            #expect(!outcome.text.contains("\r\n0\r\n"))
            await #expect(throws: (any Error).self) {
                _ = try await TestServerHarness.fetch(server, "/fault/truncated-chunked")
            }
        }
    }

    @Test func malformedResponsesFailTheClient() async throws {
        try await TestServerHarness.withServer { server async throws in
            for kind in ["status", "version", "header", "nul"] {
                await #expect(throws: (any Error).self, "kind \(kind)") {
                    _ = try await TestServerHarness.fetch(server, "/fault/malformed-status?kind=\(kind)")
                }
            }
            let outcome = try await TestServerHarness.rawExchange(
                server, "GET /fault/malformed-status HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(outcome.text.hasPrefix("HTTP/1.1 2x0 Broken\r\n"))
        }
    }

    @Test func hugeHeadersHaveTheRequestedSize() async throws {
        try await TestServerHarness.withServer { server async throws in
            let reply = try await TestServerHarness.fetch(server, "/fault/huge-headers?size=20000")
            let total = reply.headers.filter { $0.name.hasPrefix("X-Huge-") }.reduce(0) { $0 + $1.value.utf8.count }
            #expect(total == 20000)
            #expect(reply.text == "ok")
        }
    }

    @Test func resetIsSeenAsConnectionReset() async throws {
        try await TestServerHarness.withServer { server async throws in
            let outcome = try await TestServerHarness.rawExchange(
                server, "GET /fault/reset HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(outcome.resetByPeer)
            #expect(outcome.bytes.isEmpty)
        }
    }

    @Test func dripForeverKeepsSendingUntilTheClientLeaves() async throws {
        try await TestServerHarness.withServer { server async throws in
            let outcome = try await TestServerHarness.rawExchange(
                server, "GET /fault/drip-forever?interval_ms=1 HTTP/1.1\r\nHost: a\r\n\r\n", limit: 400)
            #expect(outcome.bytes.count >= 400)
            #expect(outcome.text.contains("1\r\n*\r\n1\r\n*\r\n"))
        }
    }

    @Test func neverAnswerClosesAtItsCap() async throws {
        try await TestServerHarness.withServer { server async throws in
            let outcome = try await TestServerHarness.rawExchange(
                server, "GET /fault/never-answer?max_ms=50 HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(outcome.bytes.isEmpty)
            #expect(!outcome.closedByClientBound)
        }
    }

    @Test func dripForeverIsCutAtItsCapWithoutTheLastChunk() async throws {
        try await TestServerHarness.withServer { server async throws in
            let outcome = try await TestServerHarness.rawExchange(
                server, "GET /fault/drip-forever?interval_ms=5&max_ms=100 HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(!outcome.closedByClientBound)
            #expect(outcome.text.hasPrefix("HTTP/1.1 200 OK"))
            #expect(!outcome.text.hasSuffix("0\r\n\r\n"))
        }
    }

    @Test func contentDispositionCarriesHostileNames() async throws {
        try await TestServerHarness.withServer { server async throws in
            let plain = try await TestServerHarness.fetch(
                server, "/fault/content-disposition?filename=..%2F..%2Fetc%2Fpasswd")
            #expect(plain.headers.first(name: "Content-Disposition") == "attachment; filename=\"../../etc/passwd\"")
            let star = try await TestServerHarness.fetch(
                server, "/fault/content-disposition?filename=%2Ftmp%2F%C3%A9%22x&form=star")
            #expect(
                star.headers.first(name: "Content-Disposition") == "attachment; filename*=UTF-8''%2Ftmp%2F%C3%A9%22x")
            let injected = try await TestServerHarness.fetch(server, "/fault/content-disposition?filename=a%0D%0AX:1")
            #expect(injected.status == .badRequest)
        }
    }

    @Test func flakyFailsThenRecoversPerID() async throws {
        try await TestServerHarness.withServer { server async throws in
            let path = "/fault/flaky?id=t1&failures=2&status=503"
            #expect(try await TestServerHarness.fetch(server, path).status == .serviceUnavailable)
            #expect(try await TestServerHarness.fetch(server, path).status == .serviceUnavailable)
            let third = try await TestServerHarness.fetch(server, path)
            #expect(third.status == .ok)
            #expect(try third.json()["attempt"] == 3)
            // Another id has its own counter.
            #expect(
                try await TestServerHarness.fetch(server, "/fault/flaky?id=t2&failures=1").status == .serviceUnavailable
            )

            await #expect(throws: (any Error).self) {
                _ = try await TestServerHarness.fetch(server, "/fault/flaky?id=c&failures=1&mode=close")
            }
            #expect(try await TestServerHarness.fetch(server, "/fault/flaky?id=c&failures=1&mode=close").status == .ok)
            server.resetFlakyCounters()
            #expect(try await TestServerHarness.fetch(server, path).status == .serviceUnavailable)
        }
    }

    @Test func shutdownClosesStalledConnections() async throws {
        let server = try await TestServer.start()
        async let outcome = TestServerHarness.rawExchange(server, "GET /fault/never-answer HTTP/1.1\r\nHost: a\r\n\r\n")
        // Wait, with a bound, until the server holds the request.
        let held = try await server.stats(when: { $0.requestsReceived > 0 })
        #expect(held.requestsReceived == 1)
        try await server.shutdown()
        #expect(try await outcome.bytes.isEmpty)
    }
}

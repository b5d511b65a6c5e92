import AsyncHTTPClient
import CourierTestServer
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Testing

/// A client that has read a whole response finds it counted in the stats at once, whatever
/// kind of response it was: the server counts before the last byte leaves, not after it was
/// flushed (a fresh-clone CI run once read `requestsServed == 0` right after a response).
@Suite("Test server: stats are recorded before the response ends", .timeLimit(.minutes(3)))
struct ServerStatsTests {
    /// One request per response shape the connection handler writes: in full, streamed with a
    /// Content-Length past NIO's write watermark, chunked, paced, empty, and head-only.
    static let shapes: [(path: String, method: HTTPMethod)] = [
        ("/get?shape=complete", .GET),
        ("/bytes/200000?seed=3", .GET),
        ("/stream-bytes/3000?chunk_size=1000", .GET),
        ("/drip?numbytes=2&duration=0", .GET),
        ("/bytes/0", .GET),
        ("/bytes/10", .HEAD),
    ]

    @Test func everySequentialResponseIsCountedWhenTheClientHasIt() async throws {
        try await TestServerHarness.withServer { server async throws in
            var mismatches: [String] = []
            for round in 1...1000 {
                let shape = Self.shapes[round % Self.shapes.count]
                _ = try await TestServerHarness.fetch(server, shape.path, method: shape.method)
                let stats = server.stats
                if stats.requestsServed != round || stats.requestsReceived != round {
                    mismatches.append(
                        "\(round) \(shape.path): served \(stats.requestsServed), received \(stats.requestsReceived)")
                }
            }
            #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        }
    }

    @Test func concurrentClientsNeverSeeFewerServedThanTheyHaveRead() async throws {
        try await TestServerHarness.withServer { server async throws in
            // Every response some client has read in full must be counted; more may be counted
            // (other clients' responses on their way). Concurrency adds the load under which
            // the race showed.
            let read = NIOLockedValueBox(0)
            let shortfalls = try await withThrowingTaskGroup(of: Int.self) { group in
                for client in 0..<8 {
                    group.addTask {
                        var shortfalls = 0
                        for round in 0..<100 {
                            let shape = Self.shapes[(client + round) % Self.shapes.count]
                            _ = try await TestServerHarness.fetch(server, shape.path, method: shape.method)
                            let readSoFar = read.withLockedValue { count -> Int in
                                count += 1
                                return count
                            }
                            if server.stats.requestsServed < readSoFar { shortfalls += 1 }
                        }
                        return shortfalls
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(shortfalls == 0)
            #expect(server.stats.requestsServed == 8 * 100)
        }
    }

    @Test func closeDelimitedAndFaultResponsesAreCountedBeforeTheClose() async throws {
        try await TestServerHarness.withServer { server async throws in
            let requests = [
                // HTTP/1.0: the body ends with the close.
                "GET /stream-bytes/5000?seed=2 HTTP/1.0\r\n\r\n",
                // A malformed answer, then the close.
                "GET /fault/malformed-status HTTP/1.1\r\nHost: a\r\n\r\n",
                // A body cut short on purpose.
                "GET /fault/close-mid-response?after=10 HTTP/1.1\r\nHost: a\r\n\r\n",
                // Keep-alive answers, the last one asking for the close.
                "GET /get?n=1 HTTP/1.1\r\nHost: a\r\n\r\nGET /bytes/70000 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
            ]
            var expected = 0
            for (index, request) in requests.enumerated() {
                let outcome = try await TestServerHarness.rawExchange(server, request)
                #expect(!outcome.closedByClientBound, "request \(index)")
                expected += index == requests.count - 1 ? 2 : 1
                #expect(server.stats.requestsServed == expected, "request \(index)")
            }
        }
    }

    @Test func requestsClosedWithoutAnAnswerAreNotServed() async throws {
        try await TestServerHarness.withServer { server async throws in
            let outcome = try await TestServerHarness.rawExchange(
                server, "POST /fault/close-after-request-bytes?n=0 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc")
            #expect(outcome.bytes.isEmpty)
            #expect(server.stats.requestsReceived == 1)
            #expect(server.stats.requestsServed == 0)
        }
    }
}

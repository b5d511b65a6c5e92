import Courier
import CourierTestServer
import Foundation
import Testing

@testable import CourierCore

/// Metrics over HTTP/2: the version, and streams of one connection counted as reuse.
@Suite(.timeLimit(.minutes(3)))
struct HTTP2MetricsTests {
    @Test func streamsOfOneConnectionAreReused() async throws {
        try await HTTP2TransportTests.withHTTP2 { server, manager in
            let first = try await manager.data(for: Request(url: server.url("/get")))
            let second = try await manager.data(for: Request(url: server.url("/get")))
            #expect(first.response.httpVersion == .http2)
            let attempts = [first, second].compactMap { $0.metrics.attempts.first }
            #expect(attempts.map(\.httpVersion) == [.http2, .http2])
            #expect(attempts.map(\.reusedConnection) == [false, true])
            #expect(attempts.allSatisfy { $0.remoteAddress == "127.0.0.1:\(server.port)" })
            #expect(server.stats.http2ConnectionsOpened == 1)
        }
    }
}

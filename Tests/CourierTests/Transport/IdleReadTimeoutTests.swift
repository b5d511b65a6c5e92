import Courier
import CourierTestServer
import Foundation
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

/// The delegate path enforces `readTimeout` with one timer per exchange instead of
/// AsyncHTTPClient's per-part timer: silence still times out, a body that keeps arriving for
/// longer than the timeout does not.
@Suite("Idle read timeout on the delegate path", .timeLimit(.minutes(3)))
struct IdleReadTimeoutTests {
    @Test func aBodyThatKeepsComingOutlivesTheReadTimeout() async throws {
        // 40 bytes, one every 500 ms: 20 s in all, more than the 15 s read timeout, but never
        // 15 s without a byte. The thirtyfold margin is for the full parallel suite with nginx
        // and httpbin up, where the 1 GiB stream, the 256 MiB uploads and the HTTP/2 load tests
        // held both event loops long enough to trip a tenfold one (4 s against 400 ms drips).
        try await withFaultSession(transport: { $0.readTimeout = .seconds(15) }) { server, manager, _ in
            let response = try await manager.data(for: Request(url: server.url("/drip?numbytes=40&duration=20")))
            #expect(response.response.statusCode == 200)
            #expect(response.data.count == 40)
        }
    }

    @Test func silenceAfterTheHeadHitsTheReadTimeout() async throws {
        // The head and one byte, then a minute of nothing.
        try await withFaultSession(transport: { $0.readTimeout = .milliseconds(300) }) { server, manager, _ in
            await expectFailure([.timedOut]) {
                try await manager.data(
                    for: Request(url: server.url("/fault/drip-forever?interval_ms=60000&max_ms=20000")))
            }
        }
    }

    /// One idle-read timer: the delegate's. AsyncHTTPClient's own, which re-arms on every
    /// response part, stays off on every client.
    @Test func everyClientLeavesAsyncHTTPClientsReadTimeoutOff() {
        var settings = AsyncHTTPClientTransport.Configuration()
        settings.readTimeout = .seconds(5)
        #expect(settings.makeClientConfiguration(connectionLedger: ConnectionLedger()).timeout.read == nil)
    }
}

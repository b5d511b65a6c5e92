import CourierTestServer
import Foundation
import Testing

@testable import Courier

/// The delegate path enforces `readTimeout` with one timer per exchange instead of
/// AsyncHTTPClient's per-part timer: silence still times out, a body that keeps arriving for
/// longer than the timeout does not.
@Suite("Idle read timeout on the delegate path", .timeLimit(.minutes(3)))
struct IdleReadTimeoutTests {
    @Test func aBodyThatKeepsComingOutlivesTheReadTimeout() async throws {
        // 25 bytes, one every 400 ms: 10 s in all, more than twice the 4 s read timeout, but
        // never 4 s without a byte. The tenfold margin is for the full parallel suite, where the
        // 1 GiB stream and the 10,000-request HTTP/2 tests keep both event loops busy for seconds.
        try await withFaultSession(transport: { $0.readTimeout = .seconds(4) }) { server, manager, _ in
            let response = try await manager.data(for: Request(url: server.url("/drip?numbytes=25&duration=10")))
            #expect(response.response.statusCode == 200)
            #expect(response.data.count == 25)
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

    @Test func theDelegateClientLeavesAsyncHTTPClientsReadTimeoutOff() {
        var settings = AsyncHTTPClientTransport.Configuration()
        settings.readTimeout = .seconds(5)
        #expect(settings.makeClientConfiguration().timeout.read == .seconds(5))
        #expect(settings.makeClientConfiguration(appliesReadTimeout: false).timeout.read == nil)
    }
}

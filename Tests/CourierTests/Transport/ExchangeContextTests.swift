import Courier
import CourierTestServer
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import CourierCore

@Suite("Exchange context: the cancel handle, the deadline rule, the default transport's capabilities")
struct ExchangeContextTests {
    @Test func aHandleRunsTheLatestActionOnceWhetherCancelledBeforeOrAfter() {
        let calls = NIOLockedValueBox<[String]>([])
        let handle = ExchangeCancellation()
        handle.onCancel { calls.withLockedValue { $0.append("first") } }
        handle.onCancel { calls.withLockedValue { $0.append("second") } }
        #expect(!handle.isCancelled)
        handle.cancel()
        handle.cancel()
        #expect(handle.isCancelled)
        // An exchange that registers after the cancel is stopped as it registers.
        handle.onCancel { calls.withLockedValue { $0.append("late") } }
        #expect(calls.withLockedValue { $0 } == ["second", "late"])

        let inert = ExchangeCancellation.none
        inert.onCancel { calls.withLockedValue { $0.append("never") } }
        inert.cancel()
        #expect(!inert.isCancelled)
        #expect(calls.withLockedValue { $0 } == ["second", "late"])
    }

    @Test func theDeadlineIsTheRequestsElseTheTransportsElseNone() {
        #expect(RequestDeadline(seconds: nil, orElse: nil) == nil)
        let before = NIODeadline.now()
        let fallback = RequestDeadline(seconds: nil, orElse: 30)?.instant
        #expect(fallback.map { $0 >= before + .seconds(30) } == true)
        // No usable interval: the transport's default applies.
        #expect(RequestDeadline(seconds: .infinity, orElse: 30) != nil)
        let own = RequestDeadline(seconds: 1, orElse: 30)?.instant
        #expect(own.map { $0 < before + .seconds(30) } == true)
    }

    @Test func theDefaultTransportSaysWhatTheSessionReliesOn() async throws {
        var configuration = AsyncHTTPClientTransport.Configuration()
        configuration.requestTimeout = .seconds(7)
        let transport = AsyncHTTPClientTransport(configuration: configuration)
        #expect(transport.capabilities.defaultTimeout == .seconds(7))
        try await transport.shutdown()

        struct Plain: Transport {
            func send(_ request: Request, context: ExchangeContext) async throws -> TransportResponse {
                throw CourierError(.transportFailed, "unused")
            }
            func shutdown() async throws {}
        }
        #expect(Plain().capabilities == TransportCapabilities())
    }

    /// A limit of 1 byte stops the socket after every chunk and a limit of 0 would never let it go
    /// on (no chunk could take the held bytes under it), so the transport holds at least one.
    /// The raise holds the response's delegate, not its exchange: keeping it after the body is
    /// dropped must still let the drop cancel the exchange and free its connection.
    @Test(.timeLimit(.minutes(1)))
    func aKeptReadAheadRaiseLetsADroppedBodyCancelItsExchange() async throws {
        try await withTransport { server, transport, _ in
            var raise: (@Sendable (Int) -> Void)?
            do {
                let response = try await transport.send(
                    Request(url: server.url("/stream-bytes/\(1 << 30)")), context: ExchangeContext())
                raise = response.raiseReadAhead
            }
            let stats = try await server.stats(when: { $0.connectionsOpen == 0 })
            #expect(stats.connectionsOpen == 0)
            #expect(raise != nil)
            raise?(64 << 20)  // after the exchange ended: changes nothing
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: [0, 1, 16 * 1024, 8 << 20])
    func everyReadAheadLimitDeliversTheWholeBody(limit: Int) async throws {
        try await withTransport { server, transport, _ in
            let url = server.url("/bytes/\(3 << 20)?seed=5")
            var received = ByteBuffer()
            let response = try await transport.send(Request(url: url), context: ExchangeContext(readAheadLimit: limit))
            for try await var chunk in response.body {
                await Task.yield()  // a reader that lags behind the socket
                received.writeBuffer(&chunk)
            }
            let reference = try await transport.send(Request(url: url), context: ExchangeContext())
            var expected = ByteBuffer()
            for try await var chunk in reference.body { expected.writeBuffer(&chunk) }
            #expect(received.readableBytes == 3 << 20)
            #expect(received == expected)
        }
    }
}

import Courier
import CourierTestServer
import Foundation
import NIOCore
import Testing

/// How every transport fails: cancellation before the head and mid-body, deadlines, refused
/// connections, TLS trust failures and malformed responses, each with the same typed code.
@Suite("Transport conformance: failures", .timeLimit(.minutes(3)))
struct TransportFailureConformanceTests {
    /// A request the server reads and never answers (for 60 s): however late a busy test
    /// process gets round to cancelling it, the head cannot have arrived first.
    static let silent = "/fault/never-answer?max_ms=60000"

    @Test("a cancel through the context before the head is .cancelled", arguments: TransportKind.allCases)
    func cancelBeforeHeadThroughContext(_ kind: TransportKind) async throws {
        try await Harness.with(kind) { harness in
            let cancellation = ExchangeCancellation()
            let canceller = Task {
                try await Task.sleep(for: .milliseconds(200))
                cancellation.cancel()
            }
            defer { canceller.cancel() }
            await expectCode(.cancelled) {
                try await harness.exchange(
                    Request(url: harness.url(Self.silent)), context: ExchangeContext(cancellation: cancellation))
            }
        }
    }

    @Test("cancelling the calling Swift task before the head is .cancelled", arguments: TransportKind.allCases)
    func cancelBeforeHeadThroughTask(_ kind: TransportKind) async throws {
        try await Harness.with(kind) { harness in
            let exchange = Task { try await harness.exchange(Request(url: harness.url(Self.silent))) }
            try await Task.sleep(for: .milliseconds(200))
            exchange.cancel()
            await expectCode(.cancelled) { try await exchange.value }
        }
    }

    @Test("a cancel in the middle of the body is .cancelled", arguments: TransportKind.network)
    func cancelMidBody(_ kind: TransportKind) async throws {
        try await Harness.with(kind) { harness in
            let cancellation = ExchangeCancellation()
            let response = try await harness.transport.send(
                Request(url: harness.url("/fault/drip-forever?interval_ms=20&max_ms=30000")),
                context: ExchangeContext(cancellation: cancellation))
            var iterator = response.body.makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first?.readableBytes ?? 0 > 0)
            cancellation.cancel()
            await expectCode(.cancelled) {
                while try await iterator.next() != nil {}
            }
        }
    }

    /// Reads the whole exchange for `path` with a deadline `seconds` away through a session over
    /// the transport: the session's task owns the one timer and stops the exchange through its
    /// cancellation handle; the transport arms none of its own.
    static func exchange(_ path: String, within seconds: Double, on harness: Harness) async throws {
        var request = Request(url: harness.url(path))
        request.timeoutInterval = seconds
        _ = try await SessionManager(transport: harness.transport).data(for: request)
    }

    @Test("a deadline that passes before the head is .timedOut", arguments: TransportKind.allCases)
    func deadlineBeforeHead(_ kind: TransportKind) async throws {
        try await Harness.with(kind) { harness in
            await expectCode(.timedOut) { try await Self.exchange(Self.silent, within: 0.3, on: harness) }
        }
    }

    @Test("a deadline that passes in the middle of the body is .timedOut", arguments: TransportKind.network)
    func deadlineMidBody(_ kind: TransportKind) async throws {
        try await Harness.with(kind) { harness in
            await expectCode(.timedOut) {
                try await Self.exchange("/fault/drip-forever?interval_ms=20&max_ms=30000", within: 0.6, on: harness)
            }
        }
    }

    @Test("a refused connection is .connectionFailed", arguments: TransportKind.network)
    func connectionRefused(_ kind: TransportKind) async throws {
        // Port 1, as the CLI's tests use: below the ephemeral range, so unlike a port that was
        // just listened on and closed, no server of a test running in parallel can be handed it
        // (one was, once, and the URLSession case got an answer).
        let url = try #require(URL(string: "http://127.0.0.1:1/get"))
        let transport = kind.makeTransport()
        await expectCode(.connectionFailed) { try await transport.send(Request(url: url), context: ExchangeContext()) }
        try? await transport.shutdown()
    }

    @Test("an untrusted (self-signed) certificate is .serverTrustFailed", arguments: TransportKind.network)
    func untrustedCertificate(_ kind: TransportKind) async throws {
        let server = try await TestServer.start(tls: try SelfSignedCertificate.context.get())
        let transport = kind.makeTransport()
        await expectCode(.serverTrustFailed) {
            try await transport.send(Request(url: server.url("/get")), context: ExchangeContext())
        }
        try? await transport.shutdown()
        try await server.shutdown()
    }

    @Test(
        "a response that is not HTTP is .transportFailed",
        arguments: TransportKind.network, ["status", "version", "header", "nul"])
    func malformedResponse(_ kind: TransportKind, _ malformation: String) async throws {
        try await Harness.with(kind) { harness in
            await expectCode(.transportFailed) {
                try await harness.exchange(Request(url: harness.url("/fault/malformed-status?kind=\(malformation)")))
            }
        }
    }

    @Test(
        "a connection that breaks before or during the response is .connectionFailed",
        arguments: TransportKind.network,
        [
            "/fault/close-mid-response", "/fault/truncated-chunked", "/fault/reset", "/fault/reset?after=500",
            "/fault/wrong-content-length",
        ])
    func brokenConnection(_ kind: TransportKind, _ path: String) async throws {
        try await Harness.with(kind) { harness in
            await expectCode(.connectionFailed) { try await harness.exchange(Request(url: harness.url(path))) }
        }
    }
}

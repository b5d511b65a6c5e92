import Courier
import CourierTestServer
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import Testing

@testable import AsyncHTTPClient
@testable import CourierAsyncHTTPClient
@testable import CourierCore

/// Courier's transport against the test server's HTTP/2 mode: every reset ends in a response or a
/// typed error, and requests on streams that a retiring connection never processed are sent
/// again (early answers: `HTTP2EarlyAnswerTests`).
@Suite("HTTP/2: early answers, resets and retired connections", .serialized, .timeLimit(.minutes(3)))
struct HTTP2TransportTests {
    /// Runs `body` with a manager that trusts a fresh HTTP/2 test server.
    static func withHTTP2(
        _ options: HTTP2Options = HTTP2Options(), _ body: (TestServer, SessionManager) async throws -> Void
    ) async throws {
        try await HTTP2TestHarness.withServer(options) { context in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([context.certificate])
            var configuration = AsyncHTTPClientTransport.Configuration()
            configuration.tlsConfiguration = tls
            configuration.connectTimeout = .seconds(60)  // the parallel suite can starve a handshake
            let transport = AsyncHTTPClientTransport(configuration: configuration)
            let manager = SessionManager(transport: transport)
            do {
                try await body(context.server, manager)
            } catch {
                try? await manager.shutdown()
                try? await transport.shutdown()
                throw error
            }
            try await manager.shutdown()
            try await transport.shutdown()
        }
    }

    /// The bodies an upload can have: a multipart form with a file part (streamed over TLS),
    /// bytes in memory, and a one-shot stream of unknown length.
    static func uploads(to url: URL, file: URL) throws -> [Request] {
        var form = MultipartFormData()
        try form.append(fileURL: file, name: "f")
        var multipart = Request(method: .post, url: url, body: .source(form))
        try multipart.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
        let inMemory = Request(method: .post, url: url, body: .data(patternData(count: 4_000_000)))
        let oneShot = Request(
            method: .put, url: url,
            body: .oneShotStream(
                length: nil,
                AsyncStream<ByteBuffer> { continuation in
                    for _ in 0..<32 { continuation.yield(ByteBuffer(bytes: patternData(count: 128 * 1024))) }
                    continuation.finish()
                }))
        return [multipart, inMemory, oneShot]
    }

    /// A request over HTTP/2 teaches the transport its connection's loop: later requests to the
    /// origin ask AsyncHTTPClient to run their delegate there (no thread hop per callback); another
    /// origin, plain HTTP and a body read as it arrives ask for nothing.
    @Test func requestsToAnHTTP2OriginAskForItsConnectionsLoop() async throws {
        try await HTTP2TestHarness.withServer(HTTP2Options()) { context in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([context.certificate])
            var configuration = AsyncHTTPClientTransport.Configuration()
            configuration.tlsConfiguration = tls
            let transport = AsyncHTTPClientTransport(configuration: configuration)
            let manager = SessionManager(transport: transport)
            let url = context.server.url("/post")
            func asksForALoop(_ url: URL) throws -> Bool {
                let request = try HTTPClient.Request(url: url.absoluteString)
                if case .delegate = transport.connectionLedger.eventLoopPreference(for: request).preference {
                    return true
                }
                return false
            }
            #expect(try !asksForALoop(url))
            let response = try await manager.data(for: Request(method: .post, url: url, body: .data(Data("a".utf8))))
            #expect(response.response.status.code == 200)
            #expect(try asksForALoop(url))
            #expect(try !asksForALoop(try #require(URL(string: "https://courier.invalid/post"))))
            var plain = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
            plain.scheme = "http"
            #expect(try !asksForALoop(try #require(plain.url)))
            let again = try await manager.data(for: Request(method: .post, url: url, body: .data(Data("b".utf8))))
            #expect(again.response.status.code == 200)
            try await manager.shutdown()
            try await transport.shutdown()
        }
    }

    @Test func downloadsAndUploadsOverAnHTTP2Server() async throws {
        try await Self.withHTTP2 { server, manager in
            let download = try await manager.data(for: Request(url: server.url("/bytes/1000000?seed=3")))
            #expect(Array(download.data) == TestServer.expectedBytes(count: 1_000_000, seed: 3))
            let payload = patternData(count: 3_000_000)
            let upload = try await manager.data(
                for: Request(method: .post, url: server.url("/post"), body: .data(payload)))
            let echo = try jsonObject(upload.data)
            #expect((echo["data"] as? String)?.utf8.count ?? 0 > 0)
            #expect(upload.response.httpVersion == HTTPProtocolVersion(major: 2, minor: 0))
            #expect(server.stats.http2StreamsServed == 2, "the download and the upload rode HTTP/2")
        }
    }

    @Test func aHundredConcurrentGETsShareOneHTTP2Connection() async throws {
        try await Self.withHTTP2 { server, manager in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<100 {
                    group.addTask {
                        let response = try await manager.data(for: Request(url: server.url("/get?i=\(index)")))
                        return Int(response.response.status.code)
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 100))
            let stats = server.stats
            #expect(stats.http2ConnectionsOpened == 1)
            #expect(stats.http2StreamsServed == 100)
        }
    }

    /// A stream reset before any answer: REFUSED_STREAM (never processed) and CANCEL (what a
    /// GOAWAY does to the streams above its last-stream-id) are sent again, up to four times,
    /// then end in a typed error; every other code is a typed error at once.
    @Test(arguments: [
        ("refused_stream", 1 + UnansweredExchange.maximumResends), ("cancel", 1 + UnansweredExchange.maximumResends),
        ("internal_error", 1), ("protocol_error", 1), ("enhance_your_calm", 1), ("no_error", 1),
        ("flow_control_error", 1), ("http_1_1_required", 1),
    ])
    func resetsBeforeTheHeadAreResentOnlyWhenNothingWasProcessed(code: String, attempts: Int) async throws {
        try await Self.withHTTP2 { server, manager in
            let url = server.url("/fault/h2-reset?code=\(code)&when=before-head")
            _ = await expectCode(.connectionFailed) {
                _ = try await manager.data(for: Request(url: url))
            }
            #expect(server.stats.http2StreamsReset == attempts, "\(code)")
        }
    }

    /// A reset after the response head: the server processed the request, so it is not sent
    /// again whatever the code; the body read fails with a typed error.
    @Test(arguments: ["after-head", "mid-body"])
    func resetsAfterTheHeadAreTypedErrorsAndNotResent(when: String) async throws {
        try await Self.withHTTP2 { server, manager in
            let url = server.url("/fault/h2-reset?code=cancel&when=\(when)")
            _ = await expectCode(.connectionFailed) {
                _ = try await manager.data(for: Request(url: url))
            }
            #expect(server.stats.http2StreamsReset == 1)
        }
    }

    /// GOAWAY whose last-stream-id leaves the request's stream out: the stream is dropped
    /// unprocessed, and the GET goes out again on a new connection, where the same endpoint
    /// drops it again, until the bound ends it in a typed error.
    @Test func aStreamAGoAwayLeftOutIsResentOnANewConnectionWithinItsBound() async throws {
        try await Self.withHTTP2 { server, manager in
            _ = await expectCode(.connectionFailed) {
                _ = try await manager.data(for: Request(url: server.url("/fault/h2-goaway?last=exclude")))
            }
            let stats = server.stats
            #expect(stats.http2GoAwaysSent == 1 + UnansweredExchange.maximumResends)
            #expect(stats.http2ConnectionsOpened == 1 + UnansweredExchange.maximumResends)
        }
    }

    /// A GOAWAY that includes the stream, on a connection that has served before: the stream is
    /// answered, and the next request opens a new connection.
    @Test func aStreamAGoAwayIncludesIsAnswered() async throws {
        try await Self.withHTTP2 { server, manager in
            _ = try await manager.data(for: Request(url: server.url("/get")))
            let response = try await manager.data(for: Request(url: server.url("/fault/h2-goaway?last=include")))
            #expect(response.response.status.code == 200)
            let next = try await manager.data(for: Request(url: server.url("/get")))
            #expect(next.response.status.code == 200)
            #expect(server.stats.http2ConnectionsOpened == 2)
        }
    }

    /// The same GOAWAY on the first stream of a fresh connection: AsyncHTTPClient 1.37 closes the
    /// connection before the response that is still due (raw AsyncHTTPClient fails the same way,
    /// with `remoteConnectionClosed`). The GET is idempotent, so it goes out again, each time on
    /// a new connection that this endpoint retires the same way, once (a closed connection is
    /// resent once): a typed error, and the server saw both attempts.
    @Test func aGoAwayOnAFreshConnectionsFirstStreamEndsInATypedErrorWithinTheBound() async throws {
        try await Self.withHTTP2 { server, manager in
            _ = await expectCode(.connectionFailed) {
                _ = try await manager.data(for: Request(url: server.url("/fault/h2-goaway?last=include")))
            }
            #expect(server.stats.http2GoAwaysSent == 1 + UnansweredExchange.maximumResendsAfterClose)
        }
    }

    /// The server retires each connection after 50 streams, as nginx's `keepalive_requests`
    /// does; 10,000 requests, 32 at a time, all succeed: the GETs and the POSTs beside them (over
    /// HTTP/2 as well).
    @Test func tenThousandRequestsThroughConnectionsRetiredEveryFiftyStreamsAllSucceed() async throws {
        try await Self.withHTTP2(HTTP2Options(streamsPerConnection: 50)) { server, manager in
            let total = 10_000
            let concurrency = 32
            let failures = NIOLockedValueBox<[String]>([])
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<concurrency {
                    group.addTask {
                        for index in stride(from: worker, to: total, by: concurrency) {
                            do {
                                let request =
                                    index % 100 == 0
                                    ? Request(
                                        method: .post, url: server.url("/post"), body: .data(Data("\(index)".utf8)))
                                    : Request(url: server.url("/get?i=\(index)"))
                                let response = try await manager.data(for: request)
                                if response.response.status.code != 200 {
                                    failures.withLockedValue { $0.append("\(index): \(response.response.status.code)") }
                                }
                            } catch {
                                failures.withLockedValue { $0.append("\(index): \(error)") }
                            }
                        }
                    }
                }
            }
            // Every 100th a POST over HTTP/2: one whose stream never opened before its connection
            // closed, or whose stream a GOAWAY left out, provably reached no server and is resent.
            let lost = failures.withLockedValue { $0 }
            let kinds = Dictionary(
                grouping: lost, by: { $0.split(separator: ":").dropFirst().first.map(String.init) ?? "" }
            ).mapValues(\.count)
            #expect(lost.isEmpty, "\(lost.count) of \(total) failed: \(kinds); first: \(lost.first ?? "")")
            let stats = server.stats
            #expect(stats.http2StreamsServed >= total)
            #expect(stats.http2GoAwaysSent >= total / 50)
        }
    }
}

import AsyncHTTPClient
import CourierDigest
import CourierTestServer
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// Helpers for the test server's own tests: one AsyncHTTPClient with redirects off, a raw TCP
/// exchange for byte-level checks, and a scoped server.
enum TestServerHarness {
    /// A client that never follows redirects and gives up reading after a bound, so fault
    /// tests end even when the server stops talking.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        // Patient: on a loaded 2-core machine the parallel suite has starved TLS handshakes past 10 s.
        configuration.timeout = .init(connect: .seconds(60), read: .seconds(30))
        configuration.decompression = .disabled
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// The answer to one request: status, headers and the whole body.
    struct Reply {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        var body: ByteBuffer

        var bytes: [UInt8] { Array(body.readableBytesView) }
        var text: String { String(decoding: body.readableBytesView, as: UTF8.self) }
        func json() throws -> TestServerJSON { try #require(TestServerJSON.parse(body.readableBytesView)) }
    }

    /// Runs `body` with a fresh server and shuts it down afterwards, whatever happens.
    static func withServer<T>(
        host: String = "127.0.0.1", _ body: (TestServer) async throws -> T
    ) async throws -> T {
        let server = try await TestServer.start(host: host)
        do {
            let result = try await body(server)
            try await server.shutdown()
            return result
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    /// Sends one request through AsyncHTTPClient and collects the reply (up to 64 MiB).
    static func fetch(
        _ server: TestServer, _ pathAndQuery: String, method: HTTPMethod = .GET,
        headers: [(String, String)] = [], body: [UInt8]? = nil, client: HTTPClient = TestServerHarness.client
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: server.url(pathAndQuery).absoluteString)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let collected = try await response.body.collect(upTo: 64 * 1024 * 1024)
        return Reply(status: response.status, headers: response.headers, body: collected)
    }

    /// Writes `request` verbatim on a new TCP connection and returns every byte the server
    /// sends until it closes the connection (or `limit` bytes), and how the connection ended.
    static func rawExchange(_ server: TestServer, _ request: String, limit: Int = 16 * 1024 * 1024) async throws
        -> RawOutcome
    {
        let collector = RawCollector(limit: limit)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) }
            }
            .connect(host: server.host, port: server.port)
            .get()
        // A bound, not an assertion: a server that never closes cannot hang the test run.
        channel.eventLoop.scheduleTask(in: .seconds(20)) {
            collector.markClosedByClientBound()
            channel.close(promise: nil)
        }
        try await channel.writeAndFlush(ByteBuffer(string: request))
        try await channel.closeFuture.get()
        return collector.outcome
    }

    /// What a raw exchange saw.
    struct RawOutcome: Sendable {
        var bytes: [UInt8] = []
        var resetByPeer = false
        /// The client's 20 s bound closed the connection, not the server.
        var closedByClientBound = false
        var text: String { String(decoding: bytes, as: UTF8.self) }
    }

    /// Collects inbound bytes; a reset shows up as an ECONNRESET error before the close.
    final class RawCollector: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        private let limit: Int
        private(set) var outcome = RawOutcome()

        init(limit: Int) { self.limit = limit }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            outcome.bytes.append(contentsOf: buffer.readableBytesView)
            if outcome.bytes.count >= limit { context.close(promise: nil) }
        }

        func markClosedByClientBound() { outcome.closedByClientBound = true }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if let error = error as? IOError, error.errnoCode == ECONNRESET { outcome.resetByPeer = true }
            context.close(promise: nil)
        }
    }
}

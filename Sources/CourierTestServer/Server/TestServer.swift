import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// An in-process HTTP/1.1 (and, over TLS, HTTP/2) server that answers as httpbin does, plus an
/// upload sink and fault endpoints, for tests, `courier serve` and `courier demo`.
///
/// Start one per test on an ephemeral loopback port, talk to ``baseURL``, and shut it down:
///
/// ```swift
/// let server = try await TestServer.start()
/// defer { Task { try await server.shutdown() } }
/// let url = server.url("/bytes/1024?seed=7")
/// ```
///
/// Endpoints (httpbin's JSON shapes): /get /post /put /patch /delete /anything(/…),
/// /status/{codes}, /redirect-to, /redirect/{n}, /relative-redirect/{n}, /absolute-redirect/{n},
/// /bytes/{n}, /stream-bytes/{n}, /range/{n}, /drip, /delay/{n}, /headers, /ip, /user-agent,
/// /uuid, /upload, and /fault/… (see the README in this folder).
///
/// HTTP/2: start with a TLS context offering ALPN `h2` and ``HTTP2Options``, and clients that
/// offer `h2` get HTTP/2 (every endpoint, per stream), the others HTTP/1.1:
///
/// ```swift
/// let tls = try TestServer.makeTLSContext(certificateChain: [certificate], privateKey: key)
/// let server = try await TestServer.start(tls: tls, http2: HTTP2Options(streamsPerConnection: 50))
/// ```
///
/// `streamsPerConnection` retires each connection with GOAWAY after N streams, as nginx's
/// `keepalive_requests` does. HTTP/2 faults: `/fault/early-answer` (answer, then
/// RST_STREAM(NO_ERROR) mid-upload), `/fault/h2-reset?code=&when=`, `/fault/h2-goaway?last=`;
/// the `http2…` fields of ``TestServerStats`` count connections, streams, resets and GOAWAYs.
///
/// The server's API is `package`: Courier's tests and the CLI use it, and it is no part of
/// Courier's public surface (its ``TestServerJSON`` never meets Courier's `JSONValue`). Only what
/// the separate Benchmarks package needs is public: ``start(host:port:tls:http2:logRequests:eventLoopGroup:)``
/// (with ``HTTP2Options``), ``makeTLSContext(certificateChain:privateKey:http2Only:)``, ``port``,
/// ``shutdown()``, and ``stats`` with the request and HTTP/2 counters it reports.
public final class TestServer: Sendable {
    /// The address the server listens on, such as `127.0.0.1` or `::1`.
    package let host: String
    /// The bound port (the ephemeral port picked when started with port 0).
    public let port: Int
    /// Whether the server speaks TLS.
    package let isTLS: Bool

    private let serverChannel: any Channel
    private let state: ServerState

    private init(host: String, port: Int, isTLS: Bool, serverChannel: any Channel, state: ServerState) {
        self.host = host
        self.port = port
        self.isTLS = isTLS
        self.serverChannel = serverChannel
        self.state = state
    }

    /// Binds and starts serving.
    ///
    /// - Parameters:
    ///   - host: the address to bind: `127.0.0.1` (default), `::1`, or any local address.
    ///   - port: the port; 0 picks a free ephemeral port.
    ///   - tls: serve HTTPS with this context when given.
    ///   - http2: also speak HTTP/2 (with `tls` only) to clients that offer `h2` by ALPN; the
    ///     context must offer it too (``makeTLSContext(certificateChain:privateKey:http2Only:)`` does).
    ///     See ``HTTP2Options`` for connection retirement and the `/fault/h2-…` endpoints.
    ///   - logRequests: print one line per request to standard error.
    ///   - eventLoopGroup: the loops to run on; NIO's shared singleton group by default.
    /// - Throws: ``TestServerConfigurationError`` for `http2` without `tls`; NIO's error when
    ///   the address cannot be bound.
    public static func start(
        host: String = "127.0.0.1", port: Int = 0, tls: NIOSSLContext? = nil, http2: HTTP2Options? = nil,
        logRequests: Bool = false, eventLoopGroup: (any EventLoopGroup)? = nil
    ) async throws -> TestServer {
        if http2 != nil && tls == nil {
            throw TestServerConfigurationError(
                description: "HTTP/2 needs TLS: pass a context that offers ALPN h2 as tls")
        }
        let scheme = tls == nil ? "http" : "https"
        let state = ServerState(logRequests: logRequests, scheme: scheme)
        let router = Router()
        let group = eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 4096)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(ChannelOptions.maxMessagesPerRead, value: 16)
            .childChannelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 256 * 1024, high: 1024 * 1024))
            // Reads start as small as NIO's default and grow to 1 MiB (NIO stops at 64 KiB) while
            // they come back full: a large upload then costs the server a sixteenth of the reads
            // and of the body parts its consumers see (the sink the upload rows time against reads
            // the same way, so a resumable upload to /files/ is compared like with like).
            .childChannelOption(
                ChannelOptions.recvAllocator,
                value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 1 << 20)
            )
            .childChannelInitializer { channel in
                if let tls, let http2 {
                    return HTTP2ConnectionSetup.configure(
                        channel, tls: tls, options: http2, server: state, router: router)
                }
                return channel.eventLoop.makeCompletedFuture {
                    let handlers = channel.pipeline.syncOperations
                    if let tls {
                        try handlers.addHandler(NIOSSLServerHandler(context: tls))
                    }
                    try handlers.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
                    try handlers.addHandler(ConnectionHandler(server: state, router: router))
                }
            }
            .bind(host: host, port: port)
            .get()
        let boundPort = channel.localAddress?.port ?? port
        return TestServer(host: host, port: boundPort, isTLS: tls != nil, serverChannel: channel, state: state)
    }

    /// `http://127.0.0.1:PORT` (`https` with TLS; IPv6 hosts in brackets).
    package var baseURL: URL {
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        // Scheme, literal address and port always form a valid URL.
        return URL(string: "\(isTLS ? "https" : "http")://\(authority)") ?? URL(fileURLWithPath: "/")
    }

    /// The absolute URL for `pathAndQuery` (such as `/bytes/10?seed=1`) on this server.
    package func url(_ pathAndQuery: String) -> URL {
        URL(string: baseURL.absoluteString + pathAndQuery) ?? baseURL
    }

    /// A snapshot of the counters: connections, requests, the last request head.
    public var stats: TestServerStats { state.stats }

    /// Zeroes the counters (open connections stay counted).
    package func resetStats() { state.resetStats() }

    /// Forgets the attempt counters of `/fault/flaky`.
    package func resetFlakyCounters() { state.resetFlakyCounters() }

    /// Stops accepting, closes every open connection (including stalled ones) and returns when
    /// the listening socket and those connections are closed. Safe to call more than once.
    public func shutdown() async throws {
        let connections = state.beginShutdown()
        do {
            try await serverChannel.close()
        } catch ChannelError.alreadyClosed {
            // A second shutdown: nothing left to do.
        }
        // Wait for every connection to be closed, not only asked to: a second, concurrent call
        // (runUntilCancelled's) must not return while the first one is still closing them.
        for connection in connections {
            connection.close(promise: nil)
        }
        for connection in connections {
            try? await connection.closeFuture.get()
        }
    }

    /// Serves until the calling task is cancelled, then shuts down and returns once every
    /// connection is closed; for `courier serve`.
    package func runUntilCancelled() async throws {
        let closed = serverChannel.closeFuture
        try await withTaskCancellationHandler {
            try await closed.get()
        } onCancel: {
            Task { try? await self.shutdown() }
        }
        // The listener closes before the open connections do; return only once they are closed
        // too, so nothing is still serving (a pooled keep-alive connection, say) when this returns.
        try await shutdown()
    }

    /// The bytes `/bytes/{n}?seed=` and `/stream-bytes/{n}?seed=` serve, from `offset`, for checking downloads.
    package static func expectedBytes(count: Int, seed: UInt64 = 0, offset: Int = 0) -> [UInt8] {
        PeriodicTape.seeded(seed).bytes(at: offset, count: count)
    }

    /// The bytes `/range/{n}` serves, from `offset` (`abc…xyz` repeated).
    package static func expectedRangeBytes(count: Int, offset: Int = 0) -> [UInt8] {
        PeriodicTape.alphabet.bytes(at: offset, count: count)
    }
}

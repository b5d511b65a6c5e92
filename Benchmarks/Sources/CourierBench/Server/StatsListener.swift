import CourierTestServer
import NIOCore
import NIOHTTP1
import NIOPosix

/// A loopback HTTP/1.1 listener that answers every request with a test server's counters as
/// one JSON object: read by the driver before and after each run of the HTTP/2 rows.
enum StatsListener {
    static func start(
        group: any EventLoopGroup, stats: @escaping @Sendable () -> TestServerStats
    ) async throws -> any Channel {
        try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(StatsHandler(stats: stats))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
    }

    /// The counters the HTTP/2 rows check, as JSON (all integers).
    static func json(_ stats: TestServerStats) -> String {
        let fields: [(String, Int)] = [
            ("connectionsAccepted", stats.connectionsAccepted),
            ("requestsReceived", stats.requestsReceived),
            ("requestsServed", stats.requestsServed),
            ("http2ConnectionsOpened", stats.http2ConnectionsOpened),
            ("http2StreamsAccepted", stats.http2StreamsAccepted),
            ("http2StreamsServed", stats.http2StreamsServed),
            ("http2StreamsReset", stats.http2StreamsReset),
            ("http2GoAwaysSent", stats.http2GoAwaysSent),
        ]
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }
}

private final class StatsHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let stats: @Sendable () -> TestServerStats

    init(stats: @escaping @Sendable () -> TestServerStats) { self.stats = stats }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        let document = StatsListener.json(stats())
        let headers = HTTPHeaders([
            ("Content-Type", "application/json"), ("Content-Length", String(document.utf8.count)),
            ("Connection", "close"),
        ])
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: document)))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}

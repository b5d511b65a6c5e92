import NIOCore
import NIOHTTP1
import NIOPosix

/// A loopback HTTP/1.1 sink that counts request body bytes and throws them away.
///
/// The speed rows of the upload workloads run against it: hashing the body at the sink (what
/// the test server's `/upload` does, twice, for the body and each part) costs more CPU on this
/// 2-core machine than sending it, so a hashing sink would measure the sink, not the client.
/// Each timed run checks the byte count against Content-Length here; the sha256 check runs
/// against the test server's `/upload` in the same run (see bench.py).
enum DiscardingSink {
    static func start(group: any EventLoopGroup) async throws -> any Channel {
        try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(ChannelOptions.maxMessagesPerRead, value: 16)
            .childChannelOption(
                ChannelOptions.recvAllocator,
                value: AdaptiveRecvByteBufferAllocator(minimum: 64 * 1024, initial: 256 * 1024, maximum: 1024 * 1024))
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(CountingHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
    }
}

/// Answers every request, once its body has ended, with `{"bytes":N,"content_length":"…"}`.
private final class CountingHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private var received = 0
    private var contentLength: String?
    private var keepAlive = true

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            received = 0
            contentLength = head.headers.first(name: "content-length")
            keepAlive = head.isKeepAlive
        case .body(let chunk):
            received += chunk.readableBytes
        case .end:
            let declared = contentLength.map { "\"\($0)\"" } ?? "null"
            let document = "{\"bytes\":\(received),\"content_length\":\(declared)}"
            var headers = HTTPHeaders([
                ("Content-Type", "application/json"), ("Content-Length", String(document.utf8.count)),
            ])
            if !keepAlive { headers.add(name: "Connection", value: "close") }
            let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: document)))), promise: nil)
            if keepAlive {
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            } else {
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }
}

import NIOCore
import NIOHTTP1
import NIOPosix

/// A loopback HTTP/1.1 sink that counts request body bytes and throws them away, and serves
/// `GET /bytes/{n}`: n bytes of a fixed pseudo-random 1 MiB pattern, streamed with backpressure
/// as slices of one buffer (so the server costs next to nothing per byte).
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
            .childChannelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 1 << 20, high: 4 << 20))
            .childChannelOption(
                ChannelOptions.recvAllocator,
                value: AdaptiveRecvByteBufferAllocator(minimum: 64 * 1024, initial: 256 * 1024, maximum: 1024 * 1024)
            )
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

/// Answers every request, once its body has ended, with `{"bytes":N,"content_length":"…"}`,
/// or with the bytes `GET /bytes/{n}` asks for.
private final class CountingHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private var received = 0
    private var contentLength: String?
    private var keepAlive = true
    private var requestedBytes: Int?
    private var remainingBytes = 0
    private var streaming = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            received = 0
            contentLength = head.headers.first(name: "content-length")
            keepAlive = head.isKeepAlive
            requestedBytes = nil
            if head.method == .GET, head.uri.hasPrefix("/bytes/") {
                requestedBytes = Int(head.uri.dropFirst("/bytes/".count).prefix { $0.isNumber })
            }
        case .body(let chunk):
            received += chunk.readableBytes
        case .end:
            if let count = requestedBytes {
                startDownload(count: count, context: context)
                return
            }
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

    private func startDownload(count: Int, context: ChannelHandlerContext) {
        var headers = HTTPHeaders([
            ("Content-Type", "application/octet-stream"), ("Content-Length", String(count)),
        ])
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        remainingBytes = count
        streaming = true
        pump(context: context)
    }

    /// Writes slices of the pattern while the socket takes them; resumes on writability.
    private func pump(context: ChannelHandlerContext) {
        let pattern = DownloadPattern.buffer
        while remainingBytes > 0, context.channel.isWritable {
            let count = min(remainingBytes, pattern.readableBytes)
            remainingBytes -= count
            let slice = pattern.getSlice(at: pattern.readerIndex, length: count) ?? pattern
            context.write(wrapOutboundOut(.body(.byteBuffer(slice))), promise: nil)
        }
        if remainingBytes == 0 {
            streaming = false
            if keepAlive {
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            } else {
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
            }
        } else {
            context.flush()
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if streaming, context.channel.isWritable { pump(context: context) }
        context.fireChannelWritabilityChanged()
    }
}

/// The content of `/bytes/{n}`: 1 MiB from xorshift64*, the same in every run.
private enum DownloadPattern {
    static let buffer: ByteBuffer = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var buffer = ByteBufferAllocator().buffer(capacity: 1 << 20)
        for _ in 0..<((1 << 20) / 8) {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            buffer.writeInteger(state &* 0x2545_F491_4F6C_DD1D, endianness: .little)
        }
        return buffer
    }()
}

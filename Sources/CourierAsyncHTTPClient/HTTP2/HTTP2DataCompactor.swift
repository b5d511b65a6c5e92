import NIOCore
import NIOHTTP2

/// Copies a DATA frame's payload out of the buffer it was decoded from when it is a small part
/// of that buffer, before swift-nio-http2 keeps it for a stream whose reader waits.
///
/// A stalled stream holds up to its window (AsyncHTTPClient's 8 MiB) of frames, and each frame
/// is a slice of a decrypted TLS read that keeps the whole read alive: 9 MiB held cost about
/// 42 MiB resident for a 1 GiB download from nginx through a slow reader. Copied, they cost what
/// they hold. Sits right after NIOHTTP2's handler on every HTTP/2 connection of the transport.
final class HTTP2DataCompactor: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame

    /// Adds a compactor right after NIOHTTP2's handler of `channel`; a pipeline without one is
    /// left as it is. Call on the channel's event loop.
    static func install(onConnection channel: any Channel) {
        let sync = channel.pipeline.syncOperations
        guard let http2 = try? sync.handler(type: NIOHTTP2Handler.self) else { return }
        try? sync.addHandler(HTTP2DataCompactor(), position: .after(http2))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var frame = unwrapInboundIn(data)
        guard case .data(var payload) = frame.payload, case .byteBuffer(let bytes) = payload.data,
            bytes.storageCapacity > 2 * bytes.readableBytes + 4096
        else {
            context.fireChannelRead(data)
            return
        }
        var copy = context.channel.allocator.buffer(capacity: bytes.readableBytes)
        copy.writeImmutableBuffer(bytes)
        payload.data = .byteBuffer(copy)
        frame.payload = .data(payload)
        context.fireChannelRead(wrapInboundOut(frame))
    }
}

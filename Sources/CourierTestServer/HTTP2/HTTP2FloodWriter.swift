import NIOCore

/// A flood a hostile HTTP/2 server sends on a request's stream (`/fault/h2-flood?kind=`).
enum HTTP2Flood: String, CaseIterable {
    /// The response head, then PING frames.
    case ping
    /// The response head, then empty SETTINGS frames (each asks for an acknowledgement).
    case settings
    /// The response head, then empty DATA frames without END_STREAM.
    case emptyData = "empty-data"
    /// The response head, then PRIORITY frames for the stream.
    case priority
    /// The response head, then WINDOW_UPDATE frames of one byte for the connection.
    case windowUpdate = "window-update"
    /// The response head, then RST_STREAM frames for the stream (after the first, for a closed one).
    case reset
    /// The response head, then frames of a type no HTTP/2 endpoint knows, which are ignored.
    case unknown
    /// A response HEADERS without END_HEADERS, then CONTINUATION frames that never end it.
    case continuation
    /// A response head and a body byte, then trailers (HEADERS with END_STREAM, without
    /// END_HEADERS) followed by CONTINUATION frames that never end them.
    case trailers
}

/// Writes raw HTTP/2 frames under the server's NIOHTTP2 handler, bypassing its checks: it sits
/// between TLS and NIOHTTP2 in each HTTP/2 connection's pipeline and passes everything else on.
///
/// A flood is bounded, so that a client that never reacts cannot hold a test run: it stops
/// after ``byteCap`` bytes or ``timeCap``, whichever comes first, or when the connection closes.
final class HTTP2FloodWriter: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    static let byteCap = 512 << 20
    static let timeCap = TimeAmount.seconds(30)

    private let server: ServerState
    private var context: ChannelHandlerContext?
    private var stopsReading = false

    init(server: ServerState) {
        self.server = server
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A flood that ignores the client drops what it sends (its acknowledgements).
        if stopsReading { return }
        context.fireChannelRead(data)
    }

    /// Starts `flood` on `streamID`. With `readsClient` false the server stops reading the
    /// client's bytes, so that the client's acknowledgements pile up on its side.
    func start(_ flood: HTTP2Flood, streamID: Int, readsClient: Bool) {
        guard let context else { return }
        if !readsClient {
            stopsReading = true
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
        }
        var prelude = context.channel.allocator.buffer(capacity: 64)
        var unit = context.channel.allocator.buffer(capacity: 1024)
        let stream = UInt32(streamID)
        switch flood {
        case .continuation:
            Self.frame(&prelude, type: 0x1, flags: 0, stream: stream, payload: [0x88])
            Self.frame(&unit, type: 0x9, flags: 0, stream: stream, payload: [UInt8](repeating: 0x88, count: 16))
        case .trailers:
            Self.frame(&prelude, type: 0x1, flags: 0x4, stream: stream, payload: [0x88])
            Self.frame(&prelude, type: 0x0, flags: 0, stream: stream, payload: [0x61])
            Self.frame(&prelude, type: 0x1, flags: 0x1, stream: stream, payload: [0x40, 0x01, 0x78, 0x01, 0x79])
            Self.frame(&unit, type: 0x9, flags: 0, stream: stream, payload: [UInt8](repeating: 0x40, count: 16))
        default:
            // `:status: 200` is entry 8 of HPACK's static table.
            Self.frame(&prelude, type: 0x1, flags: 0x4, stream: stream, payload: [0x88])
            Self.repeatingFrame(flood, stream: stream, into: &unit)
        }
        var batch = context.channel.allocator.buffer(capacity: 64 * 1024)
        while batch.readableBytes + unit.readableBytes <= 64 * 1024 { batch.writeImmutableBuffer(unit) }
        let deadline = NIODeadline.now() + Self.timeCap
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(prelude)), promise: nil)
        pump(batch, sent: 0, deadline: deadline)
    }

    private func pump(_ batch: ByteBuffer, sent: Int, deadline: NIODeadline) {
        guard let context, context.channel.isActive, sent < Self.byteCap, NIODeadline.now() < deadline else {
            self.context?.close(promise: nil)
            return
        }
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(batch)), promise: written)
        written.futureResult.hop(to: context.eventLoop).assumeIsolated().whenComplete { [self] result in
            switch result {
            case .success:
                server.recordHTTP2 { $0.http2FloodBytesWritten += batch.readableBytes }
                pump(batch, sent: sent + batch.readableBytes, deadline: deadline)
            case .failure: self.context?.close(promise: nil)
            }
        }
    }

    private static func repeatingFrame(_ flood: HTTP2Flood, stream: UInt32, into unit: inout ByteBuffer) {
        switch flood {
        case .ping: frame(&unit, type: 0x6, flags: 0, stream: 0, payload: [UInt8](repeating: 0x2A, count: 8))
        case .settings: frame(&unit, type: 0x4, flags: 0, stream: 0, payload: [])
        case .emptyData: frame(&unit, type: 0x0, flags: 0, stream: stream, payload: [])
        case .priority: frame(&unit, type: 0x2, flags: 0, stream: stream, payload: [0, 0, 0, 0, 15])
        case .windowUpdate: frame(&unit, type: 0x8, flags: 0, stream: 0, payload: [0, 0, 0, 1])
        case .reset: frame(&unit, type: 0x3, flags: 0, stream: stream, payload: [0, 0, 0, 8])
        case .unknown: frame(&unit, type: 0xEE, flags: 0, stream: 0, payload: [UInt8](repeating: 0x2A, count: 8))
        case .continuation, .trailers: break
        }
    }

    /// Appends one frame: RFC 9113 §4.1's nine-byte header, then the payload.
    private static func frame(_ buffer: inout ByteBuffer, type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8]) {
        let length = UInt32(payload.count)
        buffer.writeInteger(UInt8(truncatingIfNeeded: length >> 16))
        buffer.writeInteger(UInt16(truncatingIfNeeded: length))
        buffer.writeInteger(type)
        buffer.writeInteger(flags)
        buffer.writeInteger(stream & 0x7FFF_FFFF)
        buffer.writeBytes(payload)
    }
}

import NIOCore
import NIOHTTP2

/// Keeps each HTTP/2 stream's receive window at most ``target`` bytes ahead of what its reader
/// has taken, and copies out the DATA frames that wait for a reader who stopped.
///
/// Why: AsyncHTTPClient 1.37 gives every stream swift-nio-http2's window manager with an 8 MiB
/// target, fixed in its connection. A stream whose reader waits keeps what that window let in,
/// 8 MiB per stalled stream, and each DATA frame is a slice of the decrypted TLS read it came in,
/// which keeps the whole read alive (about 4× the frame against nginx). So this handler, right
/// after NIOHTTP2's handler, takes over the window of every stream whose ``HTTP2StreamGuard``
/// tells it what the stream's reader took: it writes the stream's
/// WINDOW_UPDATEs itself, drops the multiplexer's, and reports the stream's window to the
/// multiplexer as ``silencedWindow`` so that its manager has nothing to update. A stream
/// without a tap keeps swift-nio-http2's own window, so nothing can wait for a grant nobody
/// sends.
///
/// Copies: a frame is copied out of its read only when it is a small part of that read and its
/// stream's reader has not asked for more since its last frame, so the frame will wait. A
/// reader that keeps up gets the slice itself (no copy on a fast download's path); what then
/// waits in Courier's read-ahead is compacted there (`ResponseStreamStateMachine.compacted`).
/// Being the handler right after NIOHTTP2's, it also passes the decoded frames and NIOHTTP2's
/// errors on to the connection's ``HTTP2ConnectionGuard`` (``connection``), which the streams'
/// guards find here. All of it runs on the connection's event loop.
final class HTTP2StreamWindow: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// The window each adopted stream is kept at: what a stalled stream holds at most.
    /// BENCHMARKS.md ("HTTP/2 back-pressure") has what smaller and larger windows cost.
    static let defaultTarget = 1 << 20
    /// The window the multiplexer is told an adopted stream has: far over its manager's 8 MiB
    /// target, so that it never asks for more, and far under `Int32.max`, whatever it adds.
    static let silencedWindow = 1 << 30

    /// One stream's window as this handler keeps it.
    private struct Flow {
        /// The stream's receive window as NIOHTTP2 counts it; nil until NIOHTTP2 created it.
        var window: Int?
        /// True once the stream's tap reports what its reader takes: only then is the window ours.
        var isAdopted = false
        /// Payload bytes received that the stream has not yet handed to its reader.
        var held = 0
        /// True while the stream's reader has asked for bytes it has not yet been given.
        var isReading = false
    }

    let target: Int
    /// The guard of the connection this handler is in; nil in a pipeline without one (tests).
    let connection: HTTP2ConnectionGuard?
    /// Read, changed and stored back whole: changing a flow in place (`flows[id]?.held += n`)
    /// cost 12 more allocations per HTTP/2 POST in the benchmark.
    private var flows: [HTTP2StreamID: Flow] = [:]
    /// This handler's context while it is in a pipeline: a tap's report may lead to a grant.
    private var context: ChannelHandlerContext?

    init(target: Int = HTTP2StreamWindow.defaultTarget, connection: HTTP2ConnectionGuard? = nil) {
        self.target = max(target, 4)
        self.connection = connection
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    // MARK: - Frames and events from NIOHTTP2's handler

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        connection?.saw(frame)
        switch frame.payload {
        case .data(let payload):
            let flow = flows[frame.streamID]
            if payload.endStream {
                flows[frame.streamID] = nil
            } else if var flow, flow.isAdopted {
                flow.held += payload.data.readableBytes
                flows[frame.streamID] = flow
            }
            // A stream nobody adopted keeps the old rule: every small slice is copied.
            guard flow.map({ !($0.isAdopted && $0.isReading) }) ?? true,
                let compacted = Self.compacted(frame, payload, allocator: context.channel.allocator)
            else { break }
            context.fireChannelRead(wrapInboundOut(compacted))
            return
        case .headers(let headers) where headers.endStream:
            flows[frame.streamID] = nil
        default:
            break
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection?.caught(error)
        context.fireErrorCaught(error)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let created as NIOHTTP2StreamCreatedEvent:
            if let initial = created.remoteInitialWindowSize {
                var flow = flows[created.streamID] ?? Flow()
                flow.window = Int(initial)
                flows[created.streamID] = flow
            }
        case var updated as NIOHTTP2WindowUpdatedEvent where updated.streamID != .rootStream:
            guard let window = updated.inboundWindowSize, var flow = flows[updated.streamID] else { break }
            flow.window = window
            flows[updated.streamID] = flow
            guard flow.isAdopted else { break }
            updated.inboundWindowSize = Self.silencedWindow
            context.fireUserInboundEventTriggered(updated)
            return
        case let closed as StreamClosedEvent:
            flows[closed.streamID] = nil
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    // MARK: - Frames from the multiplexer

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = unwrapOutboundIn(data)
        if case .windowUpdate = frame.payload, frame.streamID != .rootStream, flows[frame.streamID]?.isAdopted == true {
            // The multiplexer's grant for a stream whose window this handler keeps.
            promise?.succeed(())
            return
        }
        context.write(data, promise: promise)
    }

    // MARK: - Reports from the streams' guards

    /// The stream `streamID` reports what its reader takes from now on; `isReading` says
    /// whether the reader asked for bytes already. Nothing is granted before the reader takes
    /// its first bytes, as swift-nio-http2 does: an answer within the initial window (most
    /// are) costs no WINDOW_UPDATE.
    func adopt(_ streamID: HTTP2StreamID, isReading: Bool) {
        var flow = flows[streamID] ?? Flow()
        flow.isAdopted = true
        flow.isReading = isReading
        flows[streamID] = flow
    }

    /// The reader of `streamID` asked for bytes.
    func streamAsksToRead(_ streamID: HTTP2StreamID) {
        guard var flow = flows[streamID], !flow.isReading else { return }
        flow.isReading = true
        flows[streamID] = flow
    }

    /// The reader of `streamID` was given a frame with `bytes` of payload (zero for other frames).
    /// Once a quarter of the stream's window is missing, it is topped up to ``target`` ahead of
    /// the reader: a WINDOW_UPDATE for every ``target``/4 bytes taken.
    func streamGave(_ streamID: HTTP2StreamID, bytes: Int) {
        guard var flow = flows[streamID] else { return }
        flow.held = max(0, flow.held - bytes)
        flow.isReading = false
        let increment = target - ((flow.window ?? target) + flow.held)
        let grants = bytes > 0 && flow.isAdopted && increment >= target / 4
        // NIOHTTP2 reports the new window (an event) while the frame is written; set it first.
        if grants { flow.window? += increment }
        flows[streamID] = flow
        guard grants, let context else { return }
        let grant = HTTP2Frame(streamID: streamID, payload: .windowUpdate(windowSizeIncrement: increment))
        context.writeAndFlush(wrapOutboundOut(grant), promise: nil)
    }

    /// `frame` with its payload copied out of the read it is a small part of; nil when it is
    /// most of its storage, or not a byte buffer.
    private static func compacted(
        _ frame: HTTP2Frame, _ payload: HTTP2Frame.FramePayload.Data, allocator: ByteBufferAllocator
    ) -> HTTP2Frame? {
        guard case .byteBuffer(let bytes) = payload.data,
            bytes.storageCapacity > 2 * bytes.readableBytes + 4096
        else { return nil }
        var copy = allocator.buffer(capacity: bytes.readableBytes)
        copy.writeImmutableBuffer(bytes)
        var payload = payload
        payload.data = .byteBuffer(copy)
        return HTTP2Frame(streamID: frame.streamID, payload: .data(payload))
    }
}

import CourierCore
import NIOCore
import NIOHTTP2
import NIOSSL

/// Ends an HTTP/2 connection whose server floods it, or whose protocol failed, before the
/// flood can grow the process.
///
/// swift-nio-http2 1.46 under AsyncHTTPClient 1.37 has two gaps that let one server end the
/// client's process (RELIABILITY.md, "HTTP/2 floods"):
/// - After a connection error (more CONTINUATION frames than it allows, a header block over
///   its limit, 10,000 unsent PING or SETTINGS acknowledgements) NIOHTTP2 sends GOAWAY and
///   stops decoding, but nobody closes the connection: AsyncHTTPClient's connection handlers
///   do not act on the error. Every later read is appended to the frame decoder's buffer
///   until a `ByteBuffer` index overflows (a trap) or memory runs out.
/// - Frames that carry nothing (PING, SETTINGS, PRIORITY, WINDOW_UPDATE, RST_STREAM, empty
///   DATA, extension frames NIOHTTP2 drops) are answered or absorbed for ever: a server can
///   keep a request waiting and the process busy.
///
/// The guard closes the connection in both cases. It counts the bytes the server sends that
/// make no progress, and closes once ``unproductiveByteLimit`` of them arrive in a row.
/// Progress is a DATA frame with payload, a frame that ends a response (END_STREAM), or a
/// DATA frame the client writes (the server's WINDOW_UPDATEs answer an upload). What a server
/// still sends on a stream the client reset (a download or stream dropped mid-body) is the
/// client's own window, not a flood: NIOHTTP2 drops it unseen, so each RST_STREAM the client
/// writes lets ``resetStreamAllowance`` bytes through uncounted. And it closes
/// the connection when NIOHTTP2 writes a GOAWAY with an error code. Either way the exchanges
/// on the connection fail with ``HTTP2ConnectionBroken``, which names the frames or the error.
///
/// It is fed by two handlers, both on the connection's event loop: ``Front`` before NIOHTTP2's
/// handler (raw bytes in and out) and the connection's ``HTTP2StreamWindow`` right after it,
/// which passes on the decoded frames and the errors NIOHTTP2 reports (``saw(_:)``,
/// ``caught(_:)``); each stream's ``HTTP2StreamGuard`` reports the failure to its exchange.
/// AsyncHTTPClient offers a hook into the connection only once its HTTP/2 handlers are in place
/// and the server's SETTINGS has been read, so ``Front`` may join in the middle of an inbound
/// frame: it counts inbound bytes whatever they are, and cuts them at frame ends only while
/// their headers make sense; what the client writes is whole, so its headers are always read.
///
/// It is also what a connection's streams share: each ``HTTP2StreamGuard`` finds it through
/// the connection's ``HTTP2StreamWindow`` and takes the ``probe`` from it.
final class HTTP2ConnectionGuard {
    /// Bytes in a row from the server that make no progress, after which the connection is
    /// closed: a mebibyte is over 60,000 PING frames, where a well-behaved server sends a few.
    static let unproductiveByteLimit = 1 << 20
    /// What a server may still have in flight on a stream the client resets: the stream's whole
    /// window, which AsyncHTTPClient keeps at up to 8 MiB, and RFC 9113's initial 65,535 bytes.
    static let resetStreamAllowance = (8 << 20) + 65_535
    /// The most ``allowance`` grows to, however many streams the client resets at once.
    static let maximumAllowance = 8 * resetStreamAllowance

    private let limit: Int
    /// Notes the request head of each of the connection's streams; nil notes none.
    let probe: RequestHeadProbe?
    private var unproductiveBytes = 0
    /// Bytes still let through uncounted for streams the client reset.
    private var allowance = 0
    /// What the server sent since the last progress, by frame type (the decoded ones).
    private var unproductiveFrames: [String: Int] = [:]
    /// Why the connection was condemned, once it is.
    private var condemnation: Condemnation?
    /// The lowest last-stream-id of the GOAWAYs the server sent: streams above it were never
    /// processed (RFC 9113 §6.8).
    private var goAwayLastStreamID: HTTP2StreamID?

    private enum Condemnation {
        case flood(String)
        /// NIOHTTP2 wrote GOAWAY with this code; it reports the error that made it do so
        /// (`cause`) right after, so the message is made when a stream asks.
        case connectionError(UInt32, frames: String?, cause: (any Error)?)
    }

    /// Why the connection was closed, once the guard has closed it.
    private var failure: HTTP2ConnectionBroken? {
        switch condemnation {
        case nil: return nil
        case .flood(let reason): return HTTP2ConnectionBroken(reason: reason)
        case .connectionError(let code, let frames, let cause):
            let cause = [cause.map(Self.describe), frames].compactMap { $0 }
            let detail = cause.isEmpty ? "" : " (\(cause.joined(separator: "; ")))"
            return HTTP2ConnectionBroken(
                reason: "the HTTP/2 connection failed with \(HTTP2ErrorCode(networkCode: Int(code)).rfcName)\(detail)")
        }
    }

    init(limit: Int = HTTP2ConnectionGuard.unproductiveByteLimit, probe: RequestHeadProbe? = nil) {
        self.limit = limit
        self.probe = probe
    }

    /// Installs the guard around NIOHTTP2's handler of `channel`, an HTTP/2 connection, with an
    /// ``HTTP2StreamWindow`` right after that handler; a pipeline without one is left as it is.
    /// Call on the channel's event loop.
    static func install(onConnection channel: any Channel, ledger: ConnectionLedger) {
        let sync = channel.pipeline.syncOperations
        guard let http2 = try? sync.handler(type: NIOHTTP2Handler.self) else { return }
        let state = HTTP2ConnectionGuard(probe: RequestHeadProbe(ledger: ledger, connection: channel))
        try? sync.addHandler(Front(state), position: .before(http2))
        try? sync.addHandler(HTTP2StreamWindow(connection: state), position: .after(http2))
    }

    // MARK: - Accounting

    fileprivate func received(_ count: Int) {
        let absorbed = min(count, allowance)
        allowance -= absorbed
        unproductiveBytes += count - absorbed
    }

    /// Condemns the connection when what the server sent since the last progress is a flood;
    /// true when it is.
    fileprivate func condemnsFlood() -> Bool {
        guard unproductiveBytes > limit else { return false }
        let frames = unproductiveFrameSummary.map { " (\($0))" } ?? " (frames that HTTP/2 clients ignore)"
        condemnation = .flood(
            "the server sent \(unproductiveBytes) bytes of HTTP/2 frames that carried no response\(frames)")
        return true
    }

    fileprivate func clientResetStream() {
        allowance = min(Self.maximumAllowance, allowance + Self.resetStreamAllowance)
    }

    fileprivate func progressed() {
        unproductiveBytes = 0
        if !unproductiveFrames.isEmpty { unproductiveFrames.removeAll(keepingCapacity: true) }
    }

    /// A frame NIOHTTP2 decoded: progress, or counted by its type for the message; a GOAWAY's
    /// last-stream-id is seen before NIOHTTP2 closes the streams above it.
    func saw(_ frame: HTTP2Frame) {
        let name: String
        switch frame.payload {
        case .data(let body) where body.data.readableBytes > 0 || body.endStream: return progressed()
        case .headers(let headers) where headers.endStream: return progressed()
        case .data: name = "empty DATA"
        case .headers: name = "HEADERS"
        case .priority: name = "PRIORITY"
        case .rstStream: name = "RST_STREAM"
        case .settings: name = "SETTINGS"
        case .pushPromise: name = "PUSH_PROMISE"
        case .ping: name = "PING"
        case .goAway(let last, _, _):
            goAwayLastStreamID = min(goAwayLastStreamID ?? last, last)
            name = "GOAWAY"
        case .windowUpdate: name = "WINDOW_UPDATE"
        case .alternativeService: name = "ALTSVC"
        case .origin: name = "ORIGIN"
        }
        unproductiveFrames[name, default: 0] += 1
    }

    /// The frames counted since the last progress, most frequent first: "12000 PING, 3 SETTINGS".
    private var unproductiveFrameSummary: String? {
        guard !unproductiveFrames.isEmpty else { return nil }
        let counted = unproductiveFrames.sorted { $0.value > $1.value }.prefix(3)
        return "the server sent " + counted.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    }

    fileprivate func condemnForError(goAwayCode: UInt32) {
        guard condemnation == nil else { return }
        condemnation = .connectionError(goAwayCode, frames: unproductiveFrameSummary, cause: nil)
    }

    /// An error NIOHTTP2 reported on the connection.
    func caught(_ error: any Error) {
        // NIOHTTP2 reports the error that made it write GOAWAY right after the GOAWAY; what
        // follows the close (TLS's unclean shutdown) says nothing about the server.
        guard case .connectionError(let code, let frames, .none) = condemnation else { return }
        condemnation = .connectionError(code, frames: frames, cause: error)
    }

    /// Why `stream` closed without an answer, when the guard knows: it closed the connection
    /// (``HTTP2ConnectionBroken``), or the stream provably reached no server. It never got a
    /// stream ID, so none of its frames was written (AsyncHTTPClient writes the request head
    /// only once the stream is writable); or its ID is above the last-stream-id of a GOAWAY the
    /// server sent (RFC 9113 §6.8), whatever NIOHTTP2 reported for it. Nil for a stream that may
    /// have been processed. Call on the stream's event loop.
    func whyClosed(_ stream: any Channel) -> (any Error)? {
        if let failure { return failure }
        guard let id = try? stream.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID) else {
            return HTTP2StreamNeverOpened()
        }
        return leftOut(id)
    }

    /// The error for stream `id` when it is above the last-stream-id of a GOAWAY the server
    /// sent: never processed (RFC 9113 §6.8).
    func leftOut(_ id: HTTP2StreamID) -> HTTP2StreamLeftOutByGoAway? {
        guard let last = goAwayLastStreamID, id > last else { return nil }
        return HTTP2StreamLeftOutByGoAway(streamID: id, lastStreamID: last)
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case is NIOHTTP2Errors.ExcessiveContinuationFrames: return "more CONTINUATION frames than allowed"
        case is NIOHTTP2Errors.ExcessivelyLargeHeaderBlock: return "a header block over the size allowed"
        case is NIOHTTP2Errors.ExcessiveOutboundFrameBuffering:
            return "too many PING or SETTINGS acknowledgements waiting to be sent"
        case is NIOHTTP2Errors.ExcessiveEmptyDataFrames: return "too many empty DATA frames"
        case is NIOHTTP2Errors.ExcessiveControlFrames: return "too many control frames in a short time"
        default: return String(describing: error)
        }
    }
}

extension HTTP2ConnectionGuard {
    /// Before NIOHTTP2's handler: counts the server's bytes, drops them once the connection
    /// is condemned (NIOHTTP2 decodes no more after a connection error: they would only pile
    /// up), and reads the frame headers the client writes.
    final class Front: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer
        typealias OutboundIn = IOData
        typealias OutboundOut = IOData

        let state: HTTP2ConnectionGuard
        private var outbound = HTTP2FrameHeaderScanner()
        /// The server's frames, for where they end; RFC 9113's 16 KiB frames, as AsyncHTTPClient
        /// advertises no larger. Lost (and unused) if the guard joined in the middle of a frame.
        private var inbound = HTTP2FrameHeaderScanner(maximumFrameLength: 1 << 14)
        /// The start of a frame whose end has not arrived yet, held back until more bytes do.
        private var unfinishedFrame: ByteBuffer?

        init(_ state: HTTP2ConnectionGuard) {
            self.state = state
        }

        /// Passes the server's bytes on cut at the last frame boundary in them, so that NIOHTTP2
        /// parses every read to its end. Why: its frame decoder appends each read to the one
        /// buffer and starts that buffer over only when it parsed all of it; ByteBuffer grows a
        /// buffer it owns alone without dropping the bytes already read, and a reader that keeps
        /// up leaves it alone. Reads cut anywhere grew it to 256 MiB over a fast 1 GiB download
        /// (BENCHMARKS.md, "HTTP/2 download memory"). Only a slice is held, never a copy.
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard state.condemnation == nil else { return }
            var bytes = unwrapInboundIn(data)
            state.received(bytes.readableBytes)
            let end = inbound.isLost ? nil : bytes.withUnsafeReadableBytes { inbound.scan($0) { _ in } }
            if let unfinished = unfinishedFrame {
                unfinishedFrame = nil
                context.fireChannelRead(wrapInboundOut(unfinished))
            }
            if let end, end < bytes.readableBytes, let whole = bytes.readSlice(length: end) {
                // Held before passing on: a read that arrives while NIOHTTP2 parses comes after it.
                unfinishedFrame = bytes
                context.fireChannelRead(wrapInboundOut(whole))
            } else {
                context.fireChannelRead(wrapInboundOut(bytes))
            }
            if state.condemnsFlood() { Self.abort(context) }
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            // Closures written at the call, not stored: non-escaping, they cost no allocation.
            switch unwrapOutboundIn(data) {
            case .byteBuffer(let buffer):
                _ = buffer.withUnsafeReadableBytes { bytes in outbound.scan(bytes) { written($0, context) } }
            case .fileRegion(let region):
                outbound.skip(region.readableBytes)
            }
            context.write(data, promise: promise)
        }

        /// A frame the client wrote: DATA is progress; RST_STREAM lets what the server had in
        /// flight on it through; a GOAWAY with an error code condemns.
        private func written(_ frame: HTTP2FrameHeaderScanner.Frame, _ context: ChannelHandlerContext) {
            if frame.type == HTTP2FrameHeaderScanner.Frame.dataType, frame.length > 0 {
                state.progressed()
            } else if frame.type == HTTP2FrameHeaderScanner.Frame.resetStreamType {
                state.clientResetStream()
            } else if let code = frame.goAwayErrorCode, code != 0 {
                state.condemnForError(goAwayCode: code)
                // On a later turn of the loop: NIOHTTP2 flushes its GOAWAY (at the end of the read
                // at the latest) and reports the error behind it, which the message quotes, first.
                context.eventLoop.assumeIsolated().execute { Self.abort(context) }
            }
        }

        /// Closes the connection under TLS: a hostile server is owed no close_notify, and
        /// NIOSSL's orderly close would read what the server goes on sending for up to its
        /// shutdown timeout (five seconds by default, hundreds of megabytes on loopback).
        private static func abort(_ context: ChannelHandlerContext) {
            let sync = context.pipeline.syncOperations
            if let tls = try? sync.context(handlerType: NIOSSLClientHandler.self) {
                tls.close(promise: nil)
            } else {
                context.close(promise: nil)
            }
        }
    }

}

/// An HTTP/2 connection that ``HTTP2ConnectionGuard`` closed; the transport reports it as
/// `CourierError.Code.transportFailed` with ``reason``.
struct HTTP2ConnectionBroken: Error, Hashable, CustomStringConvertible {
    /// What the server did, for people.
    let reason: String

    var description: String { reason }
}

/// A stream above the last-stream-id of a GOAWAY the server sent: never processed (RFC 9113
/// §6.8), so its request may go out again whatever its method (`UnansweredExchange.refused`).
struct HTTP2StreamLeftOutByGoAway: Error, Hashable, CustomStringConvertible {
    let streamID: HTTP2StreamID
    let lastStreamID: HTTP2StreamID

    var description: String { "a GOAWAY with last-stream-id \(lastStreamID) left stream \(streamID) unprocessed" }
}

/// A stream closed before any of its frames was written (it had no stream ID yet): nothing of
/// its request left the client, so it may go out again whatever its method
/// (`UnansweredExchange.unsent`).
struct HTTP2StreamNeverOpened: Error, Hashable, CustomStringConvertible {
    var description: String { "the HTTP/2 connection closed before the request's stream was opened" }
}

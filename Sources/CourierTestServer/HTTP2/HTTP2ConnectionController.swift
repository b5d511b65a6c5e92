import NIOCore
import NIOHTTP2

/// Runs one HTTP/2 connection's lifetime, after NIOHTTP2's handler in the connection pipeline:
/// admits streams, retires the connection after N of them (nginx's `keepalive_requests`), sends
/// the GOAWAYs faults ask for, and closes the connection once the streams a GOAWAY kept have
/// finished.
///
/// Stream handlers call it directly; they run on the connection's event loop.
final class HTTP2ConnectionController: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let server: ServerState
    private let streamLimit: Int?
    private var context: ChannelHandlerContext?
    private var admitted = 0
    private var openStreams: Set<HTTP2StreamID> = []
    /// The last-stream-id of the GOAWAY sent, if any; later GOAWAYs may only lower it.
    private var goAwayLastStreamID: HTTP2StreamID?
    private var isClosing = false
    private var lingering: Scheduled<Void>?
    /// Closes a retiring connection that NIOHTTP2 reported an error on, should its kept streams
    /// not finish.
    private var drainDeadline: Scheduled<Void>?

    /// Writes the raw frames of a hostile server's floods, under NIOHTTP2.
    private let floodWriter: HTTP2FloodWriter

    init(server: ServerState, streamLimit: Int?, floodWriter: HTTP2FloodWriter) {
        self.server = server
        self.streamLimit = streamLimit
        self.floodWriter = floodWriter
    }

    /// Starts the flood a stream asked for (`/fault/h2-flood`).
    func flood(_ request: HTTP2FloodRequest, on streamID: HTTP2StreamID) {
        floodWriter.start(request.flood, streamID: Int(streamID), readsClient: request.readsClient)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Connection-level frames (SETTINGS, PING, the client's GOAWAY) need nothing from us.
    }

    func channelInactive(context: ChannelHandlerContext) {
        isClosing = true
        lingering?.cancel()
        lingering = nil
        drainDeadline?.cancel()
        drainDeadline = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A retiring connection lets the streams its GOAWAY kept finish, as nginx does: the
        // client's frames for the streams the GOAWAY left out cross it and make NIOHTTP2 report
        // errors (NoSuchStream, RaisedGoawayLastStreamID) that say nothing about those streams.
        // Closing at once cut their answers off. It closes once they are done, within
        // ``lingerLimit`` in case the error stopped NIOHTTP2 for good.
        if goAwayLastStreamID != nil, !isClosing, error is any NIOHTTP2Error || error is NIOHTTP2Errors.StreamError {
            if drainDeadline == nil {
                drainDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerLimit) { [self] in
                    closeAfterFlushing()
                }
            }
            closeIfDrained()
            resumeParsing(context: context)
            return
        }
        // Before any GOAWAY, NIOHTTP2 has already answered a protocol error with one; TLS and
        // socket errors leave nothing worth keeping.
        context.close(promise: nil)
    }

    /// NIOHTTP2 stops parsing a read at a connection error (a DATA frame for a stream its GOAWAY
    /// left out counts as one: NoSuchStream) and goes on only with the next read. The client's
    /// last frames for a stream the GOAWAY kept may wait in that read, and the client, waiting
    /// for the answer, sends nothing more: the kept stream then hung until ``lingerLimit`` cut it
    /// off. An empty read, handed to NIOHTTP2's handler on the next turn, parses the rest.
    private func resumeParsing(context: ChannelHandlerContext) {
        context.eventLoop.assumeIsolated().execute { [self] in
            guard !isClosing,
                let http2 = try? context.pipeline.syncOperations.context(handlerType: NIOHTTP2Handler.self),
                let handler = http2.handler as? NIOHTTP2Handler
            else { return }
            handler.channelRead(context: http2, data: NIOAny(context.channel.allocator.buffer(capacity: 0)))
            handler.channelReadComplete(context: http2)
        }
    }

    // MARK: - Streams

    func streamOpened(_ id: HTTP2StreamID) {
        openStreams.insert(id)
    }

    func streamClosed(_ id: HTTP2StreamID) {
        openStreams.remove(id)
        closeIfDrained()
    }

    /// Takes up the stream whose request head just arrived, or refuses it (returns false) when
    /// it is above a GOAWAY's last-stream-id: NIOHTTP2 may already have handed over frames of
    /// streams that the GOAWAY then dropped. Admitting the Nth stream of a retiring connection
    /// sends the GOAWAY that names it the last.
    func admit(_ id: HTTP2StreamID) -> Bool {
        if let last = goAwayLastStreamID, id > last { return false }
        guard !isClosing else { return false }
        admitted += 1
        if let streamLimit, admitted >= streamLimit, goAwayLastStreamID == nil {
            goAway(lastStreamID: id, code: .noError)
        }
        return true
    }

    /// Sends GOAWAY. NO_ERROR lets the streams at or below `lastStreamID` finish before the
    /// connection closes; any other code closes it right after the GOAWAY is written. NIOHTTP2
    /// drops the streams above `lastStreamID` at once, unanswered.
    func goAway(lastStreamID: HTTP2StreamID, code: HTTP2ErrorCode) {
        guard let context, !isClosing else { return }
        let last = min(lastStreamID, goAwayLastStreamID ?? lastStreamID)
        goAwayLastStreamID = last
        server.recordHTTP2 { $0.http2GoAwaysSent += 1 }
        let frame = HTTP2Frame(
            streamID: .rootStream, payload: .goAway(lastStreamID: last, errorCode: code, opaqueData: nil))
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
        if code == .noError {
            closeIfDrained()
        } else {
            closeAfterFlushing()
        }
    }

    /// Closes a connection that sent GOAWAY once no stream it kept is still open.
    private func closeIfDrained() {
        guard let last = goAwayLastStreamID, !isClosing, !openStreams.contains(where: { $0 <= last }) else { return }
        closeAfterFlushing()
    }

    /// Closes once everything written so far has reached the socket (the PING's write completes
    /// only after the frames before it), lingering as nginx does: the output is shut (TLS
    /// close_notify, then FIN) and the client's last frames are read until it closes, or for
    /// ``lingerLimit`` at most. Closing at once with the client's frames unread would make the
    /// kernel answer with a TCP reset, and the client's kernel may then throw away our last
    /// frames before the client has read them.
    private func closeAfterFlushing() {
        guard let context, !isClosing else { return }
        isClosing = true
        drainDeadline?.cancel()
        drainDeadline = nil
        let written = context.eventLoop.makePromise(of: Void.self)
        let ping = HTTP2Frame(
            streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: 0x436F_7572_6965_7221), ack: false))
        context.writeAndFlush(wrapOutboundOut(ping), promise: written)
        written.futureResult.assumeIsolated().whenComplete { [self] _ in
            context.close(mode: .output, promise: nil)
            lingering = context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerLimit) {
                context.close(promise: nil)
            }
        }
    }

    /// How long a closing connection waits for the client to close its side (nginx's
    /// `lingering_timeout` default).
    static let lingerLimit: TimeAmount = .seconds(5)
}

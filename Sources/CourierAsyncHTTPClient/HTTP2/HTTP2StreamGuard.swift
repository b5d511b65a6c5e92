import CourierCore
import NIOCore
import NIOHTTP1
import NIOHTTP2

/// Courier's one handler in each HTTP/2 stream, between the frame codec and AsyncHTTPClient
/// 1.37's request handler (`HTTP2ClientRequestHandler`), for that handler's faults and gaps:
///
/// - **Early answers** (RFC 9113 §8.1; RELIABILITY.md lists the traps). The handler drops its
///   request when a response ends, even while the body is still going out, and then traps on
///   whatever comes next (WINDOW_UPDATE, a full stream buffer, RST_STREAM, GOAWAY, the close, a
///   client shutdown); a 2xx head before the body's writer has started, then writability, trips
///   its request bag. So while a body goes out the guard holds a 2xx response's end until the
///   body ends. When the server then resets the stream (any code, a GOAWAY, the close: the
///   response is whole) the end goes over after all, after an empty body part (so that the
///   request bag does not wait for a body end that never goes out), and a ``Shield`` after the
///   handler keeps the shutdown request from it. A 3xx-5xx end passes at once, the same way, and
///   the stream is closed (RST_STREAM(CANCEL): the rest of the body is not sent). A 2xx head
///   before the writer has started waits for writability and the writer. The handler takes an
///   end only while it waits for bytes, so the guard follows its reads: a reset while the
///   reader is behind hands the end over at the next read, or fails the exchange with
///   ``HTTP2EarlyAnswerCut`` once the stream is torn down.
/// - **Status codes below 100** (see `ResponseStatusGuard`): ``InvalidResponseStatus``, and the
///   stream is closed.
/// - **Why a stream ended**, for resends: ``HTTP2ConnectionBroken`` when ``HTTP2ConnectionGuard``
///   closed the connection, ``HTTP2StreamLeftOutByGoAway`` (NIOHTTP2 says CANCEL, which a server
///   may also send for a stream it processed), ``HTTP2StreamNeverOpened`` for a stream none of
///   whose frames was written; AsyncHTTPClient says "connection closed", after which no POST is
///   resent.
/// - **The stream's window and connection**: it tells ``HTTP2StreamWindow`` when the reader asks
///   for bytes and what it was given (adopted once its first frames are flushed, when it has its
///   ID), and notes the request head and the connection's loop in the ``ConnectionLedger``.
///
/// Every callback runs on the stream's event loop.
final class HTTP2StreamGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private var machine = StateMachine()
    /// The connection's window, and through it the connection's guard; nil in tests.
    private let window: HTTP2StreamWindow?
    private var streamID: HTTP2StreamID?
    /// The reader asked for bytes it has not been given yet (for the window).
    private var isReading = false

    /// `streamID` is for a stream that has one already (tests); others look it up on flush.
    init(window: HTTP2StreamWindow? = nil, streamID: HTTP2StreamID? = nil) {
        self.window = window
        self.streamID = streamID
    }

    /// Adds the guard right after an HTTP/2 stream's frame codec (next to the request handler),
    /// with its connection's ``HTTP2StreamWindow``, which holds the ``HTTP2ConnectionGuard``.
    /// Call on the stream's event loop; a pipeline without the codec is left as it is.
    static func install(onStream stream: any Channel) {
        let sync = stream.pipeline.syncOperations
        guard let codec = try? sync.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self) else { return }
        // A stream shares its connection's event loop.
        let window = try? stream.parent?.pipeline.syncOperations.handler(type: HTTP2StreamWindow.self)
        let handler = HTTP2StreamGuard(window: window)
        do {
            try sync.addHandler(handler, position: .after(codec))
        } catch {
            // A stream that could not take the guard must not carry a body unguarded.
            stream.close(promise: nil)
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        machine.handlerSeesWritable = context.channel.isActive && context.channel.isWritable
        if let streamID { window?.adopt(streamID, isReading: isReading) }
    }

    // MARK: - Inbound, toward the request handler

    func channelActive(context: ChannelHandlerContext) {
        machine.handlerSeesWritable = context.channel.isWritable
        context.fireChannelActive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        switch machine.writabilityChanged(context.channel.isWritable) {
        case .drop:
            return
        case .forward:
            context.fireChannelWritabilityChanged()
        case .forwardAndRelease(let held, let readPending):
            context.fireChannelWritabilityChanged()
            for part in held { deliver(part, context) }
            guard machine.readComplete() else { return }
            context.fireChannelReadComplete()
            // From the pipeline's tail, through the handler, so that it knows it asked.
            if readPending { context.channel.read() }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        isReading = false
        if let streamID, let window {
            var bytes = 0
            if case .body(let buffer) = part { bytes = buffer.readableBytes }
            window.streamGave(streamID, bytes: bytes)
        }
        deliver(part, context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if machine.readComplete() { context.fireChannelReadComplete() }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let closed = (error as? NIOHTTP2Errors.StreamClosed).flatMap { $0.errorCode == .cancel ? $0 : nil }
        streamEnded(closed.flatMap { window?.connection?.leftOut($0.streamID) } ?? error, context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let reason = window?.connection?.whyClosed(context.channel) { streamEnded(reason, context) }
        streamEnded(nil, context)
    }

    // MARK: - Outbound, from the request handler

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        if case .head(let head) = part, let probe = window?.connection?.probe {
            probe.note(head)
            if let host = head.headers.first(name: "host") { probe.ledger.noteHTTP2Loop(context.eventLoop, host: host) }
        }
        let heldEnd = machine.write(part)
        context.write(data, promise: promise)
        // The body is out: the handler ends the exchange normally now.
        if let trailers = heldEnd { context.fireChannelRead(wrapInboundOut(.end(trailers))) }
    }

    func flush(context: ChannelHandlerContext) {
        context.flush()
        machine.flushed()
        guard streamID == nil, let window,
            let streamID = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
        else { return }
        self.streamID = streamID
        window.adopt(streamID, isReading: isReading)
    }

    func read(context: ChannelHandlerContext) {
        switch machine.handlerRead() {
        case .hold:
            return
        case .deliverEnd(let trailers):
            deliverEnd(trailers, context)
        case .pass:
            isReading = true
            if let streamID { window?.streamAsksToRead(streamID) }
            context.read()
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        machine.handlerClosed()
        context.close(mode: mode, promise: promise)
    }

    // MARK: - Running the machine's actions

    private func deliver(_ part: HTTPClientResponsePart, _ context: ChannelHandlerContext) {
        switch machine.read(part) {
        case .forward:
            context.fireChannelRead(wrapInboundOut(part))
        case .drop:
            return
        case .refuse(let code):
            context.fireErrorCaught(InvalidResponseStatus(code: Int(code)))
            context.close(promise: nil)
        case .deliverEndAndClose(let trailers):
            deliverEnd(trailers, context)
            context.close(promise: nil)
        }
    }

    /// An error on the stream, or its close (`error` nil).
    private func streamEnded(_ error: (any Error)?, _ context: ChannelHandlerContext) {
        switch machine.streamEnded(error) {
        case .none:
            return
        case .forward:
            if let error { context.fireErrorCaught(error) } else { context.fireChannelInactive() }
        case .deliverEnd(let trailers):
            deliverEnd(trailers, context)
        case .giveUpLater:
            // The reader is behind: the end goes over when the handler next asks for bytes, if it
            // does before the stream is torn down (on a later turn of the loop).
            context.eventLoop.assumeIsolated().execute { [self] in
                if let cut = machine.giveUp() { context.fireErrorCaught(cut) }
            }
        case .release(let held):
            // A whole response's end then goes to the handler; a cut one fails its request.
            for part in held { deliver(part, context) }
            streamEnded(error, context)
        }
    }

    /// Gives the handler the end of a response while the body is unfinished, after an empty body
    /// part (without it AsyncHTTPClient's request bag would wait for the body to end); from then
    /// on the handler has dropped its request and sees nothing more, and a ``Shield`` after it
    /// keeps AsyncHTTPClient's shutdown request from it.
    private func deliverEnd(_ trailers: HTTPHeaders?, _ context: ChannelHandlerContext) {
        context.fireChannelRead(wrapInboundOut(.body(ByteBuffer())))
        context.fireChannelRead(wrapInboundOut(.end(trailers)))
        do {
            try context.pipeline.syncOperations.addHandler(Shield(), position: .last)
        } catch {
            context.close(promise: nil)
        }
    }
}

extension HTTP2StreamGuard {
    /// After the request handler, once the guard handed it an end while the body was unfinished:
    /// AsyncHTTPClient's shutdown request enters the pipeline here and would reach a force unwrap
    /// of the dropped request; the shield closes the stream in the handler's place.
    final class Shield: ChannelOutboundHandler, RemovableChannelHandler {
        typealias OutboundIn = Any

        func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
            promise?.succeed(())
            context.close(promise: nil)
        }
    }
}

/// A whole response that arrived before the request body ended, whose stream the server then
/// reset while the reader was still behind: the stream was gone before its end could be handed
/// over. The transport reports it as `CourierError.Code.connectionFailed`.
struct HTTP2EarlyAnswerCut: Error, CustomStringConvertible {
    /// The reset or close that ended the stream.
    let cause: any Error

    var description: String { "the stream was closed (\(cause)) before its answer could be handed over" }
}

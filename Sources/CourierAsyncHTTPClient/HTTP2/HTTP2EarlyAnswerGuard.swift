import NIOCore
import NIOHTTP1
import NIOHTTP2

/// Keeps AsyncHTTPClient 1.37's HTTP/2 request handler out of the states in which a server's
/// timing makes it trap, so that request bodies may ride HTTP/2.
///
/// The handler (`HTTP2ClientRequestHandler`) drops its request as soon as a response ends, even
/// while the request body is still going out: RFC 9113 §8.1 lets a server answer before it has
/// read the whole body, and nginx does for `return`, 401, 413 and redirects. Its state machine
/// still says "uploading", so whatever comes next (a WINDOW_UPDATE that makes the stream
/// writable, a full stream buffer, RST_STREAM, GOAWAY, the connection closing, a client
/// shutdown) reaches a force unwrap of the dropped request (RELIABILITY.md lists the sites). And
/// a 2xx head that arrives before the body's writer has started, followed by writability, trips
/// a `preconditionFailure` in its request bag. This guard sits right before that handler in each
/// stream's pipeline (``Inner``) and after it (``Outer``), and while a body is going out:
///
/// - holds back the end of a 2xx response until the request body has ended, so that the handler
///   keeps its request; the head and body pass at once. When the server then resets the stream
///   (§8.1 asks with NO_ERROR; any code, a GOAWAY that leaves the stream out, or the connection
///   closing is handled alike, since the response is already whole), the guard hands the handler
///   the end after all, with an empty body part before it so that AsyncHTTPClient's request bag
///   finishes without waiting for a body end that will never go out, and from then on keeps
///   every event from the handler, closing the stream itself where the handler would;
/// - passes a 3xx-5xx answer's end at once (the handler stops the upload for those itself), with
///   the same empty part, and closes the stream, which sends RST_STREAM(CANCEL): the rest of the
///   body is not sent;
/// - holds a 2xx head that arrives before the body's writer has started until the stream is
///   writable and the writer has started, reading nothing more from the stream meanwhile.
///
/// The handler forwards a response end only while it waits for bytes from the stream (it asked
/// for a read since the last read-complete); otherwise it fails the exchange as if the
/// connection had closed. The guard follows that from the reads the handler asks for and keeps
/// the handler waiting while it holds an end. When the server resets the stream while the
/// reader is behind, the end is handed over once the handler asks for more, if that happens
/// before the stream is torn down; if not, the exchange fails with ``HTTP2EarlyAnswerCut``.
///
/// Both handlers run on the stream's event loop.
final class HTTP2EarlyAnswerGuard {
    private enum Phase {
        /// No body is going out (before the request head, a request without a body, after the
        /// body ended, or after the handler failed the exchange itself): nothing to keep.
        case passing
        /// The body is going out and no final response head has come; `writerStarted` says
        /// whether the handler has told the request bag's writer to produce.
        case uploading(writerStarted: Bool)
        /// A 2xx head came before the writer started: it and what followed, held; `readPending`
        /// says the handler asked for a read that was not passed on.
        case holdingHead([HTTPClientResponsePart], readPending: Bool)
        /// A final head was passed on while the body is going out. `awaitingBytes` mirrors the
        /// handler's wait for bytes; `partsPending` says body parts reached it since its last
        /// read-complete.
        case answering(status: UInt, awaitingBytes: Bool, partsPending: Bool)
        /// A whole 2xx response arrived while the body is going out; its end is held.
        /// `cut` is the error or close that ended the stream meanwhile, if any.
        case answered(trailers: HTTPHeaders?, awaitingBytes: Bool, partsPending: Bool, cut: (any Error)?)
        /// The guard handed over an end while the body was unfinished: the handler has dropped
        /// its request, and sees nothing more.
        case finished
    }

    private var phase = Phase.passing
    /// What the handler last saw of the stream's writability (from the events it was given).
    private var handlerSeesWritable = false
    private weak var outerContext: ChannelHandlerContext?

    /// Adds the guard around AsyncHTTPClient's request handler of an HTTP/2 stream. Call on the
    /// stream's event loop from the stream initializer, before any other handler is added after
    /// the frame codec, so that ``Inner`` stays next to the request handler; a pipeline without
    /// the codec is left as it is.
    static func install(onStream stream: any Channel) {
        let sync = stream.pipeline.syncOperations
        guard let codec = try? sync.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self) else { return }
        let state = HTTP2EarlyAnswerGuard()
        do {
            try sync.addHandler(Inner(state), position: .after(codec))
            try sync.addHandler(Outer(state), position: .last)
        } catch {
            // A stream that could not take the guard must not carry a body unguarded.
            stream.close(promise: nil)
        }
    }

    // MARK: - Inbound, toward the request handler

    fileprivate func channelActive(_ context: ChannelHandlerContext) {
        handlerSeesWritable = context.channel.isWritable
        context.fireChannelActive()
    }

    fileprivate func writabilityChanged(_ context: ChannelHandlerContext) {
        if case .finished = phase { return }
        handlerSeesWritable = context.channel.isWritable
        context.fireChannelWritabilityChanged()
        guard handlerSeesWritable else { return }
        // The handler resumes a paused body when the stream turns writable, which starts the
        // writer the first time (unless a 3xx-5xx answer already stopped the upload).
        switch phase {
        case .uploading(writerStarted: false):
            phase = .uploading(writerStarted: true)
        case .holdingHead(let held, let readPending):
            releaseHead(held, readPending: readPending, context)
        default:
            break
        }
    }

    fileprivate func read(_ part: HTTPClientResponsePart, _ context: ChannelHandlerContext) {
        switch phase {
        case .passing:
            context.fireChannelRead(NIOAny(part))
        case .finished:
            return
        case .uploading(let writerStarted):
            guard case .head(let head) = part, head.isFinal else {
                context.fireChannelRead(NIOAny(part))
                return
            }
            if head.status.code < 300, !writerStarted {
                phase = .holdingHead([part], readPending: false)
                return
            }
            phase = .answering(status: head.status.code, awaitingBytes: true, partsPending: false)
            context.fireChannelRead(NIOAny(part))
        case .holdingHead(var held, let readPending):
            phase = .passing
            held.append(part)
            phase = .holdingHead(held, readPending: readPending)
        case .answering(let status, let awaitingBytes, let partsPending):
            switch part {
            case .head:
                context.fireChannelRead(NIOAny(part))
            case .body:
                phase = .answering(status: status, awaitingBytes: awaitingBytes, partsPending: true)
                context.fireChannelRead(NIOAny(part))
            case .end(let trailers):
                if status < 300 {
                    phase = .answered(
                        trailers: trailers, awaitingBytes: awaitingBytes, partsPending: partsPending, cut: nil)
                } else {
                    // The handler ends a 3xx-5xx exchange itself and never resumes its body; the
                    // empty part lets the request bag finish, and the close stops the upload.
                    deliverEnd(trailers, context)
                    context.close(promise: nil)
                }
            }
        case .answered:
            // Nothing follows a response's end on its stream.
            return
        }
    }

    fileprivate func readComplete(_ context: ChannelHandlerContext) {
        switch phase {
        case .answering(let status, _, _):
            phase = .answering(status: status, awaitingBytes: false, partsPending: false)
        case .answered, .finished:
            // A held end keeps the handler waiting for bytes, as it was when the end arrived.
            return
        default:
            break
        }
        context.fireChannelReadComplete()
    }

    /// An error on the stream, or its close (`error` nil).
    fileprivate func streamEnded(_ error: (any Error)?, _ context: ChannelHandlerContext) {
        switch phase {
        case .finished:
            return
        case .answered(let trailers, let awaitingBytes, let partsPending, let cut):
            if awaitingBytes {
                deliverEnd(trailers, context)
            } else if cut == nil {
                // The reader is behind: hand the end over when the handler next asks for bytes,
                // if it does before the stream is torn down (on a later turn of the loop).
                let cut = error ?? ChannelError.ioOnClosedChannel
                phase = .answered(trailers: trailers, awaitingBytes: false, partsPending: partsPending, cut: cut)
                context.eventLoop.assumeIsolated().execute { [self] in giveUpOnEnd(context) }
            }
        case .holdingHead(let held, _):
            if case .end = held.last {
                fireHeld(held, context)
                if case .answered(let trailers, _, _, _) = phase { deliverEnd(trailers, context) }
            } else {
                // A cut response: the handler still has its request and fails it.
                fireHeld(held, context)
                phase = .passing
                context.fireChannelReadComplete()
                forward(error, context)
            }
        default:
            forward(error, context)
        }
    }

    private func forward(_ error: (any Error)?, _ context: ChannelHandlerContext) {
        if let error {
            context.fireErrorCaught(error)
        } else {
            context.fireChannelInactive()
        }
    }

    // MARK: - Outbound, from the request handler

    /// A request part on its way out; returns the held response end to hand the handler once
    /// the part has been passed on, when it is the body's end.
    fileprivate func write(_ part: HTTPClientRequestPart) -> HTTPHeaders?? {
        switch part {
        case .head:
            // Until an end follows (at once for a request without a body).
            phase = .uploading(writerStarted: false)
        case .body:
            break
        case .end:
            switch phase {
            case .finished:
                break
            case .answered(let trailers, _, _, _):
                // The body is out: the handler ends the exchange normally now, waiting for
                // bytes or not.
                phase = .passing
                return .some(trailers)
            default:
                phase = .passing
            }
        }
        return nil
    }

    /// A flush: the handler decides whether to start the body's writer right after the head
    /// goes out, from the writability it has seen.
    fileprivate func flushed() {
        if case .uploading(writerStarted: false) = phase, handlerSeesWritable {
            phase = .uploading(writerStarted: true)
        }
    }

    /// The handler asks for bytes; false when the read is held back.
    fileprivate func handlerRead(_ context: ChannelHandlerContext) -> Bool {
        switch phase {
        case .holdingHead(let held, _):
            phase = .holdingHead(held, readPending: true)
            return false
        case .answering(let status, _, let partsPending):
            phase = .answering(status: status, awaitingBytes: true, partsPending: partsPending)
        case .answered(let trailers, _, let partsPending, let cut):
            phase = .answered(trailers: trailers, awaitingBytes: true, partsPending: partsPending, cut: cut)
            if cut != nil {
                deliverEnd(trailers, context)
                return false
            }
        default:
            break
        }
        return true
    }

    /// The handler closes the stream: it failed or ended the exchange itself and has its
    /// request no more; nothing held is owed to it.
    fileprivate func handlerClosed() {
        if case .finished = phase { return }
        phase = .passing
    }

    /// An event for the request handler from outside the pipeline (AsyncHTTPClient's shutdown
    /// request); false when it must not reach the handler.
    fileprivate func userEventMayPass() -> Bool {
        if case .finished = phase { return false }
        return true
    }

    // MARK: - Handing over

    /// Gives the handler the end of a response while the body is unfinished: after an empty
    /// body part, without which AsyncHTTPClient's request bag would wait for the body to end.
    private func deliverEnd(_ trailers: HTTPHeaders?, _ context: ChannelHandlerContext) {
        phase = .finished
        context.fireChannelRead(NIOAny(HTTPClientResponsePart.body(ByteBuffer())))
        context.fireChannelRead(NIOAny(HTTPClientResponsePart.end(trailers)))
    }

    /// The stream was torn down before the handler asked for the held end: the exchange fails.
    private func giveUpOnEnd(_ context: ChannelHandlerContext) {
        guard case .answered(_, false, _, let cut?) = phase else { return }
        phase = .passing
        context.fireErrorCaught(HTTP2EarlyAnswerCut(cause: cut))
    }

    /// The stream turned writable and the handler started the writer: the held head and what
    /// followed go to the handler.
    private func releaseHead(
        _ held: [HTTPClientResponsePart], readPending: Bool, _ context: ChannelHandlerContext
    ) {
        fireHeld(held, context)
        guard case .answering = phase else { return }
        context.fireChannelReadComplete()
        if case .answering(let status, _, _) = phase {
            phase = .answering(status: status, awaitingBytes: false, partsPending: false)
        }
        if readPending { outerContext?.read() }
    }

    /// Fires held parts as if they arrived now, leaving the phase as they would: the head
    /// starts the answer, body parts pass, an end is held.
    private func fireHeld(_ held: [HTTPClientResponsePart], _ context: ChannelHandlerContext) {
        phase = .uploading(writerStarted: true)
        for part in held {
            read(part, context)
        }
    }
}

extension HTTP2EarlyAnswerGuard {
    /// Between the frame codec and the request handler: the response parts and stream events on
    /// their way in, the request parts and reads on their way out.
    final class Inner: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias InboundOut = HTTPClientResponsePart
        typealias OutboundIn = HTTPClientRequestPart
        typealias OutboundOut = HTTPClientRequestPart

        private let state: HTTP2EarlyAnswerGuard

        init(_ state: HTTP2EarlyAnswerGuard) {
            self.state = state
        }

        func handlerAdded(context: ChannelHandlerContext) {
            state.handlerSeesWritable = context.channel.isActive && context.channel.isWritable
        }

        func channelActive(context: ChannelHandlerContext) {
            state.channelActive(context)
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            state.writabilityChanged(context)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            state.read(unwrapInboundIn(data), context)
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            state.readComplete(context)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            state.streamEnded(error, context)
        }

        func channelInactive(context: ChannelHandlerContext) {
            state.streamEnded(nil, context)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let heldEnd = state.write(unwrapOutboundIn(data))
            context.write(data, promise: promise)
            if let trailers = heldEnd {
                context.fireChannelRead(wrapInboundOut(.end(trailers)))
            }
        }

        func flush(context: ChannelHandlerContext) {
            context.flush()
            state.flushed()
        }

        func read(context: ChannelHandlerContext) {
            if state.handlerRead(context) { context.read() }
        }

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            state.handlerClosed()
            context.close(mode: mode, promise: promise)
        }
    }

    /// After the request handler: AsyncHTTPClient's shutdown request enters the pipeline here.
    /// Once the handler has dropped its request, the guard closes the stream in its place.
    final class Outer: ChannelOutboundHandler, RemovableChannelHandler {
        typealias OutboundIn = Any

        private let state: HTTP2EarlyAnswerGuard

        init(_ state: HTTP2EarlyAnswerGuard) {
            self.state = state
        }

        func handlerAdded(context: ChannelHandlerContext) {
            state.outerContext = context
        }

        func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
            guard state.userEventMayPass() else {
                promise?.succeed(())
                context.close(promise: nil)
                return
            }
            context.triggerUserOutboundEvent(event, promise: promise)
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

extension HTTPResponseHead {
    /// Whether AsyncHTTPClient takes this head as the response's (it skips other 1xx heads).
    fileprivate var isFinal: Bool { status.code >= 200 || status == .switchingProtocols }
}

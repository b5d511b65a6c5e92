import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// Serves one HTTP/2 stream: turns the request's HEADERS and DATA into what the router's body
/// consumers expect, and their ``ResponsePlan`` into HEADERS and DATA frames, pulling body
/// steps only while the stream is writable.
///
/// An answer given before the request body has ended (``RequestBodyConsumer/answerBeforeBody``,
/// ``BodyVerdict/answerEarly(_:)``) is followed by RST_STREAM(NO_ERROR) once the response is
/// written, as nginx does and RFC 9113 §8.1 allows; over HTTP/1 the same answer closes the
/// connection. Plans that only HTTP/1 can express are mapped: a cut (`.close`) becomes
/// RST_STREAM (INTERNAL_ERROR, or the code a fault chose), a TCP reset (`.reset`) resets the
/// whole connection, malformed bytes (`.raw`) become RST_STREAM(PROTOCOL_ERROR), and chunked or
/// until-close framing simply ends the stream.
final class HTTP2StreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private enum Phase {
        case awaitingHead
        case receiving(any RequestBodyConsumer)
        /// Answering; request body bytes still arriving are discarded.
        case responding
        /// The last frame (END_STREAM or RST_STREAM) has been written or the stream was refused.
        case done
    }

    private let server: ServerState
    private let router: Router
    private let connection: HTTP2ConnectionController
    private var streamID: HTTP2StreamID?
    private var phase: Phase = .awaitingHead
    private var directives: (any HTTP2StreamDirectives)?
    private var requestEnded = false
    private var isHeadRequest = false
    /// The request's target, which keys its ``HTTP2ResponseFlow`` in the stats.
    private var target: String?
    private var source: (any ResponseBodySource)?
    private var scheduled: Scheduled<Void>?
    /// Completes when the most recent frame has left for the socket; a reset waits for it,
    /// since RST_STREAM would discard frames NIOHTTP2 still holds for flow control.
    private var lastWrite: EventLoopFuture<Void>?
    private var isClosed = false

    init(server: ServerState, router: Router, connection: HTTP2ConnectionController) {
        self.server = server
        self.router = router
        self.connection = connection
    }

    func channelActive(context: ChannelHandlerContext) {
        streamID = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
        if let streamID { connection.streamOpened(streamID) }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        isClosed = true
        phase = .done
        source = nil
        scheduled?.cancel()
        scheduled = nil
        if let streamID { connection.streamClosed(streamID) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // The client reset the stream, or the connection failed: the channel is closing anyway.
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, source != nil, scheduled == nil {
            pump(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            if case .awaitingHead = phase {
                receiveHead(headers.headers, endStream: headers.endStream, context: context)
            } else if headers.endStream {
                bodyEnded(context: context)  // trailers
            }
        case .data(let data):
            if case .byteBuffer(let chunk) = data.data, chunk.readableBytes > 0 {
                receiveBody(chunk, context: context)
            }
            if data.endStream { bodyEnded(context: context) }
        case .windowUpdate(let increment):
            if let target {
                server.recordHTTP2 { stats in
                    stats.updateFlow(of: target) { flow in
                        flow.windowIncrements += increment
                        flow.windowUpdates += 1
                    }
                }
            }
        default:
            break
        }
    }

    // MARK: - Request

    private func receiveHead(_ headers: HPACKHeaders, endStream: Bool, context: ChannelHandlerContext) {
        guard let streamID, connection.admit(streamID) else {
            // Above a GOAWAY's last-stream-id: never processed; NIOHTTP2 is dropping the stream.
            phase = .done
            return
        }
        guard let head = HTTP2HeaderMapping.requestHead(headers) else {
            reset(.protocolError, context: context)
            return
        }
        requestEnded = endStream
        isHeadRequest = head.method == .HEAD
        target = head.uri
        server.requestReceived(RecordedRequestHead(head))
        server.recordHTTP2 { $0.http2StreamsAccepted += 1 }
        let parent = context.channel.parent
        if server.logRequests {
            FileHandle.standardError.write(
                Data(
                    "\(parent?.remoteAddress?.ipAddress ?? "-") \(head.method.rawValue) \(head.uri) h2 stream \(streamID)\n"
                        .utf8))
        }
        let request = ServerRequest(
            head: head, remoteAddress: parent?.remoteAddress, localAddress: parent?.localAddress, server: server)
        let consumer = HTTP2FaultEndpoints.route(request) ?? router.route(request)
        directives = consumer as? any HTTP2StreamDirectives
        guard sendRequestedGoAway(context: context) else { return }
        if let flood = directives?.takeFlood() {
            connection.flood(flood, on: streamID)
        }
        if let plan = consumer.answerBeforeBody {
            respond(plan, context: context)
        } else if requestEnded {
            respond(consumer.finish(), context: context)
        } else {
            phase = .receiving(consumer)
            if head.headers.first(name: "expect")?.lowercased() == "100-continue" {
                let interim = HTTP2Frame.FramePayload.headers(.init(headers: HTTP2HeaderMapping.continueHeaders))
                context.writeAndFlush(wrapOutboundOut(interim), promise: nil)
            }
        }
    }

    private func receiveBody(_ chunk: ByteBuffer, context: ChannelHandlerContext) {
        guard case .receiving(let consumer) = phase else { return }
        let verdict = consumer.consume(chunk)
        guard sendRequestedGoAway(context: context) else { return }
        if case .answerEarly(let plan) = verdict {
            respond(plan, context: context)
        }
    }

    private func bodyEnded(context: ChannelHandlerContext) {
        requestEnded = true
        guard case .receiving(let consumer) = phase else { return }
        guard sendRequestedGoAway(context: context) else { return }
        respond(consumer.finish(), context: context)
    }

    /// Sends the GOAWAY a fault asks for; false when that dropped this stream.
    private func sendRequestedGoAway(context: ChannelHandlerContext) -> Bool {
        guard let directives, let streamID, let request = directives.takeGoAway(requestEnded: requestEnded) else {
            return !isClosed
        }
        let last = request.includesStream ? streamID : HTTP2StreamID(max(0, Int(streamID) - 2))
        connection.goAway(lastStreamID: last, code: request.code)
        if !request.includesStream { phase = .done }
        return !isClosed && request.includesStream
    }

    // MARK: - Response

    private func respond(_ plan: ResponsePlan, context: ChannelHandlerContext) {
        guard !isClosed else { return }
        phase = .responding
        switch plan {
        case .complete(let spec, let body):
            let headers = HTTP2HeaderMapping.responseHeaders(spec, contentLength: body.readableBytes)
            if isHeadRequest || body.readableBytes == 0 {
                writeLast(.headers(.init(headers: headers, endStream: true)), context: context)
            } else {
                write(.headers(.init(headers: headers)), context: context, flush: false)
                writeLast(.data(.init(data: .byteBuffer(body), endStream: true)), context: context)
            }
        case .streamed(let spec, let framing, let source):
            var length: Int?
            if case .contentLength(let declared) = framing { length = declared }
            let headers = HTTP2HeaderMapping.responseHeaders(spec, contentLength: length)
            if isHeadRequest {
                writeLast(.headers(.init(headers: headers, endStream: true)), context: context)
                return
            }
            write(.headers(.init(headers: headers)), context: context, flush: false)
            self.source = source
            pump(context: context)
        case .raw:
            cut(code: .protocolError, context: context)
        case .delayed(let pause, let next):
            scheduled = context.eventLoop.assumeIsolated().scheduleTask(in: pause) { [self] in
                scheduled = nil
                respond(next, context: context)
            }
        case .awaiting(let release, let next):
            // `respond` checks that the stream is still open when the release comes.
            release(context.eventLoop).assumeIsolated().whenComplete { [self] _ in
                respond(next, context: context)
            }
        case .stall(let cap):
            scheduled = context.eventLoop.assumeIsolated().scheduleTask(in: cap) { [self] in
                scheduled = nil
                end(.close, context: context)
            }
        case .end(let ending):
            end(ending, context: context)
        }
    }

    private func pump(context: ChannelHandlerContext) {
        while !isClosed, context.channel.isWritable, let active = source {
            switch active.nextStep() {
            case .bytes(let chunk):
                if chunk.readableBytes > 0 {
                    write(.data(.init(data: .byteBuffer(chunk))), context: context, flush: false)
                    recordWritten(chunk.readableBytes)
                }
            case .pause(let pause):
                context.flush()
                scheduled = context.eventLoop.assumeIsolated().scheduleTask(in: pause) { [self] in
                    scheduled = nil
                    pump(context: context)
                }
                return
            case .end:
                source = nil
                writeLast(.data(.init(data: .byteBuffer(ByteBuffer()), endStream: true)), context: context)
                return
            case .abort(let ending):
                source = nil
                // The head is out, so like HTTP/1's cut responses this one counts as served.
                server.requestServed()
                context.flush()
                end(ending, context: context)
                return
            }
        }
        context.flush()
    }

    /// Ends the stream (or the connection) the way an HTTP/1 plan would end the connection.
    private func end(_ ending: ConnectionEnding, context: ChannelHandlerContext) {
        switch ending {
        case .close:
            cut(code: directives?.resetCode ?? .internalError, context: context)
        case .reset:
            phase = .done
            guard let connection = context.channel.parent else { return }
            afterLastWrite(context: context) {
                if let provider = connection as? any SocketOptionProvider {
                    provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in
                        connection.close(promise: nil)
                    }
                } else {
                    connection.close(promise: nil)
                }
            }
        }
    }

    private func write(_ payload: HTTP2Frame.FramePayload, context: ChannelHandlerContext, flush: Bool) {
        let promise = context.eventLoop.makePromise(of: Void.self)
        if flush {
            context.writeAndFlush(wrapOutboundOut(payload), promise: promise)
        } else {
            context.write(wrapOutboundOut(payload), promise: promise)
        }
        lastWrite = promise.futureResult
    }

    /// Counts `count` body bytes in the response's flow as queued, and as written once the
    /// frame just written has left.
    private func recordWritten(_ count: Int) {
        guard let target, let lastWrite else { return }
        server.recordHTTP2 { $0.updateFlow(of: target) { $0.bodyBytesQueued += count } }
        lastWrite.whenSuccess { [server] in
            server.recordHTTP2 { $0.updateFlow(of: target) { $0.bodyBytesWritten += count } }
        }
    }

    /// Writes the frame that carries END_STREAM, counting the stream as served first; if the
    /// request body has not ended, resets the stream with NO_ERROR once the frame is out.
    private func writeLast(_ payload: HTTP2Frame.FramePayload, context: ChannelHandlerContext) {
        phase = .done
        server.requestServed()
        server.recordHTTP2 { $0.http2StreamsServed += 1 }
        write(payload, context: context, flush: true)
        if !requestEnded {
            afterLastWrite(context: context) { [self] in
                if !requestEnded { followEarlyAnswer(context: context) }
            }
        }
    }

    /// After a whole answer sent while the request body is still coming: RST_STREAM(NO_ERROR),
    /// or what the fault asked for instead.
    private func followEarlyAnswer(context: ChannelHandlerContext) {
        switch directives?.afterEarlyAnswer ?? .reset(.noError) {
        case .reset(let code):
            sendReset(code, context: context)
        case .read:
            break
        case .stall(let code, let pause):
            try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
            guard let code else { return }
            scheduled = context.eventLoop.assumeIsolated().scheduleTask(in: pause) { [self] in
                scheduled = nil
                sendReset(code, context: context)
            }
        case .goAway:
            guard let streamID else { return }
            connection.goAway(lastStreamID: HTTP2StreamID(max(0, Int(streamID) - 2)), code: .noError)
        case .close:
            context.channel.parent?.close(promise: nil)
        }
    }

    /// Resets the stream with `code` once the frames written before are out.
    private func cut(code: HTTP2ErrorCode, context: ChannelHandlerContext) {
        phase = .done
        afterLastWrite(context: context) { [self] in sendReset(code, context: context) }
    }

    private func reset(_ code: HTTP2ErrorCode, context: ChannelHandlerContext) {
        phase = .done
        sendReset(code, context: context)
    }

    private func sendReset(_ code: HTTP2ErrorCode, context: ChannelHandlerContext) {
        guard !isClosed else { return }
        server.recordHTTP2 { stats in
            stats.http2StreamsReset += 1
            if code == .refusedStream { stats.http2StreamsRefused += 1 }
        }
        context.writeAndFlush(wrapOutboundOut(.rstStream(code)), promise: nil)
    }

    /// Runs `action` on the event loop once the last frame written has left (or failed), at once
    /// if nothing was written.
    private func afterLastWrite(context: ChannelHandlerContext, _ action: @escaping () -> Void) {
        guard let lastWrite else {
            action()
            return
        }
        lastWrite.assumeIsolated().whenComplete { _ in action() }
    }
}

import Foundation
import NIOCore
import NIOHTTP1

/// Serves one connection: reads request parts from NIO's HTTP/1 decoder, hands the body to the
/// route's consumer, and writes the response bytes itself (no response encoder), so faults can
/// write malformed or truncated responses.
///
/// One request is answered at a time. Pipelined requests that arrive meanwhile are queued and
/// socket reads are held until the current response is done, which bounds the queue to what
/// one read delivered.
///
/// A response is counted as served (``TestServerStats/requestsServed``) before its last byte is
/// written, never after: once that byte is on the wire a client may read the stats, on another
/// thread, before this event loop runs another line.
final class ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private struct ActiveRequest {
        var keepAlive: Bool
        var isHead: Bool
        var version: HTTPVersion
    }

    private struct ActiveStream {
        var source: any ResponseBodySource
        var chunked: Bool
        var request: ActiveRequest
        /// Body bytes still owed under a Content-Length; nil for chunked and close-delimited
        /// bodies, whose last bytes are the terminator or the close.
        var unsentLength: Int?
        /// Whether the response has been counted as served.
        var counted = false
    }

    private enum State {
        case idle
        case receiving(ActiveRequest, any RequestBodyConsumer)
        /// Discarding the rest of a request that was answered early; the connection then closes.
        case responding(ActiveRequest)
        case stalled
        case closed
    }

    private let server: ServerState
    private let router: Router
    private var state: State = .idle
    private var queued = CircularBuffer<HTTPServerRequestPart>()
    private var readHeld = false
    private var stream: ActiveStream?
    private var scheduled: Scheduled<Void>?

    init(server: ServerState, router: Router) {
        self.server = server
        self.router = router
    }

    func channelActive(context: ChannelHandlerContext) {
        if !server.connectionOpened(context.channel) {
            context.close(promise: nil)
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        state = .closed
        stream = nil
        scheduled?.cancel()
        scheduled = nil
        queued.removeAll()
        server.connectionClosed(context.channel)
        context.fireChannelInactive()
    }

    func read(context: ChannelHandlerContext) {
        if case .responding = state {
            readHeld = true
        } else {
            context.read()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch state {
        case .responding(let request):
            // Pipelined requests wait; after an early answer the rest is thrown away.
            if request.keepAlive { queued.append(part) }
        case .stalled, .closed:
            break
        case .idle, .receiving:
            handle(part, context: context)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, stream != nil, scheduled == nil {
            pump(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch state {
        case .idle, .receiving:
            if error is HTTPParserError {
                // A request the decoder rejects gets a 400 and the connection closes, as servers do.
                state = .responding(ActiveRequest(keepAlive: false, isHead: false, version: .http1_1))
                let plan = ResponsePlan.error(.badRequest, "malformed request: \(error)")
                start(
                    plan, request: ActiveRequest(keepAlive: false, isHead: false, version: .http1_1), context: context)
                return
            }
            context.close(promise: nil)
        default:
            context.close(promise: nil)
        }
    }

    private var isResponding: Bool {
        if case .responding = state { return true }
        return false
    }

    // MARK: - Requests

    private func handle(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch (state, part) {
        case (.idle, .head(let head)):
            let recorded = RecordedRequestHead(head)
            server.requestReceived(recorded)
            if server.logRequests {
                FileHandle.standardError.write(
                    Data("\(context.remoteAddress?.ipAddress ?? "-") \(head.method.rawValue) \(head.uri)\n".utf8))
            }
            let request = ServerRequest(
                head: head, remoteAddress: context.remoteAddress, localAddress: context.localAddress, server: server)
            let active = ActiveRequest(keepAlive: head.isKeepAlive, isHead: head.method == .HEAD, version: head.version)
            let consumer = router.route(request)
            if let plan = consumer.answerBeforeBody {
                var closing = active
                closing.keepAlive = false
                state = .responding(closing)
                start(plan, request: closing, context: context)
                return
            }
            state = .receiving(active, consumer)
            if head.headers.first(name: "Expect")?.lowercased() == "100-continue" {
                context.writeAndFlush(
                    wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 100 Continue\r\n\r\n")), promise: nil)
            }
        case (.receiving(var active, let consumer), .body(let chunk)):
            if case .answerEarly(let plan) = consumer.consume(chunk) {
                active.keepAlive = false
                state = .responding(active)
                start(plan, request: active, context: context)
            }
        case (.receiving(let active, let consumer), .end):
            state = .responding(active)
            start(consumer.finish(), request: active, context: context)
        default:
            break
        }
    }

    // MARK: - Responses

    private func start(_ plan: ResponsePlan, request: ActiveRequest, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        switch plan {
        case .complete(let spec, let body):
            var keepAlive = request.keepAlive && !spec.closesConnection
            var buffer = context.channel.allocator.buffer(capacity: 256 + (request.isHead ? 0 : body.readableBytes))
            writeHead(
                spec, framing: .contentLength(body.readableBytes), request: request, keepAlive: &keepAlive,
                into: &buffer)
            if !request.isHead {
                var body = body
                buffer.writeBuffer(&body)
            }
            var finished = request
            finished.keepAlive = keepAlive
            server.requestServed()
            write(buffer, context: context)
            finish(finished, context: context)
        case .streamed(let spec, var framing, let source):
            if case .chunked = framing, request.version.minor == 0 { framing = .untilClose }
            var keepAlive = request.keepAlive && !spec.closesConnection
            var buffer = context.channel.allocator.buffer(capacity: 256)
            writeHead(spec, framing: framing, request: request, keepAlive: &keepAlive, into: &buffer)
            var streaming = request
            streaming.keepAlive = keepAlive
            var unsentLength: Int?
            if case .contentLength(let length) = framing { unsentLength = length }
            // With no body to follow, the head carries the response's last byte.
            let endsWithHead = request.isHead || unsentLength == 0
            if endsWithHead { server.requestServed() }
            write(buffer, context: context)
            if request.isHead {
                finish(streaming, context: context)
                return
            }
            var chunked = false
            if case .chunked = framing { chunked = true }
            stream = ActiveStream(
                source: source, chunked: chunked, request: streaming, unsentLength: unsentLength, counted: endsWithHead)
            pump(context: context)
        case .raw(let bytes, let ending):
            // A malformed answer is still an answer, counted like one.
            server.requestServed()
            write(bytes, context: context)
            end(ending, context: context)
        case .delayed(let pause, let next):
            scheduled = context.eventLoop.assumeIsolated().scheduleTask(in: pause) { [self] in
                scheduled = nil
                start(next, request: request, context: context)
            }
        case .awaiting(let release, let next):
            // `start` checks that the channel is still open when the release comes.
            release(context.eventLoop).assumeIsolated().whenComplete { [self] _ in
                start(next, request: request, context: context)
            }
        case .stall(let cap):
            state = .stalled
            scheduled = context.eventLoop.assumeIsolated().scheduleTask(in: cap) { [self] in
                scheduled = nil
                end(.close, context: context)
            }
            if readHeld {
                readHeld = false
                context.read()
            }
        case .end(let ending):
            end(ending, context: context)
        }
    }

    private func pump(context: ChannelHandlerContext) {
        guard let active = stream else { return }
        while context.channel.isActive && context.channel.isWritable {
            switch active.source.nextStep() {
            case .bytes(let chunk):
                guard chunk.readableBytes > 0 else { continue }
                if let unsent = stream?.unsentLength {
                    stream?.unsentLength = unsent - chunk.readableBytes
                    // This chunk completes the declared length: the client is done once it arrives.
                    if unsent <= chunk.readableBytes { countStreamServed() }
                }
                if active.chunked {
                    write(
                        ByteBuffer(string: String(chunk.readableBytes, radix: 16) + "\r\n"), context: context,
                        flush: false)
                    write(chunk, context: context, flush: false)
                    write(ByteBuffer(string: "\r\n"), context: context, flush: false)
                } else {
                    write(chunk, context: context, flush: false)
                }
            case .pause(let pause):
                context.flush()
                scheduled = context.eventLoop.assumeIsolated().scheduleTask(in: pause) { [self] in
                    scheduled = nil
                    pump(context: context)
                }
                return
            case .end:
                countStreamServed()
                if active.chunked { write(ByteBuffer(string: "0\r\n\r\n"), context: context, flush: false) }
                context.flush()
                stream = nil
                finish(active.request, context: context)
                return
            case .abort(let ending):
                // A body cut short on purpose is a finished response too.
                countStreamServed()
                stream = nil
                end(ending, context: context)
                return
            }
        }
        context.flush()
    }

    /// Counts the streamed response as served, once.
    private func countStreamServed() {
        guard var active = stream, !active.counted else { return }
        active.counted = true
        stream = active
        server.requestServed()
    }

    /// Moves on after a response that has been counted and written: the next queued request,
    /// or the close.
    private func finish(_ request: ActiveRequest, context: ChannelHandlerContext) {
        guard request.keepAlive else {
            end(.close, context: context)
            return
        }
        state = .idle
        while case .idle = state, let next = queued.popFirst() {
            handle(next, context: context)
        }
        if readHeld && !isResponding {
            readHeld = false
            context.read()
        }
    }

    /// Ends the connection once everything written so far has been flushed.
    private func end(_ ending: ConnectionEnding, context: ChannelHandlerContext) {
        state = .closed
        queued.removeAll()
        switch ending {
        case .close:
            let flushed = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(wrapOutboundOut(ByteBuffer()), promise: flushed)
            flushed.futureResult.assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        case .reset:
            context.flush()
            let channel = context.channel
            if let provider = channel as? any SocketOptionProvider {
                provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in
                    channel.close(promise: nil)
                }
            } else {
                context.close(promise: nil)
            }
        }
    }

    private func write(_ buffer: ByteBuffer, context: ChannelHandlerContext, flush: Bool = true) {
        if flush {
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        } else {
            context.write(wrapOutboundOut(buffer), promise: nil)
        }
    }

    private func writeHead(
        _ spec: ResponseHeadSpec, framing: BodyFraming, request: ActiveRequest, keepAlive: inout Bool,
        into buffer: inout ByteBuffer
    ) {
        if case .untilClose = framing { keepAlive = false }
        buffer.writeString("HTTP/1.1 \(spec.status.code) \(spec.status.reasonPhrase)\r\n")
        buffer.writeString("Server: CourierTestServer\r\n")
        for header in spec.headers {
            buffer.writeString(header.name)
            buffer.writeString(": ")
            buffer.writeString(header.value)
            buffer.writeString("\r\n")
        }
        switch framing {
        case .contentLength(let length):
            // RFC 9110 §8.6: no Content-Length on 204; a 304's would describe the cached body.
            if spec.status != .noContent && spec.status != .notModified {
                buffer.writeString("Content-Length: \(length)\r\n")
            }
        case .chunked:
            buffer.writeString("Transfer-Encoding: chunked\r\n")
        case .untilClose:
            break
        }
        if !keepAlive {
            buffer.writeString("Connection: close\r\n")
        } else if request.version.minor == 0 {
            buffer.writeString("Connection: keep-alive\r\n")
        }
        buffer.writeString("\r\n")
    }
}

import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTP2
import Testing

@testable import AsyncHTTPClient
@testable import CourierAsyncHTTPClient

/// `HTTP2StreamGuard` before AsyncHTTPClient 1.37's own `HTTP2ClientRequestHandler` in an
/// embedded pipeline, driven event by event into each state where the handler alone traps (a
/// force unwrap of its dropped request ends the test process, so reaching the end of a test is
/// the proof), with a request that records what the handler tells it.
@Suite("HTTP/2 stream guard before AsyncHTTPClient's request handler")
struct HTTP2StreamGuardTests {
    /// What the handler told the request, in order.
    final class RecordingRequest: HTTPExecutableRequest, @unchecked Sendable {
        let logger = Logger(label: "courier.test.h2-guard")
        let requestHead = HTTPRequestHead(version: .http1_1, method: .POST, uri: "/upload")
        let requestFramingMetadata: RequestFramingMetadata
        let requestOptions = RequestOptions(idleReadTimeout: nil, idleWriteTimeout: nil, dnsOverride: [:])
        var executor: (any HTTPRequestExecutor)?
        var events: [String] = []
        var body = ByteBuffer()
        private var writerStarted = false
        private var headReceived = false

        init(body: RequestFramingMetadata.Body = .stream) {
            requestFramingMetadata = RequestFramingMetadata(connectionClose: false, body: body)
        }

        func willExecuteRequest(_ executor: any HTTPRequestExecutor) { self.executor = executor }
        func requestHeadSent() { events.append("headSent") }
        func resumeRequestBodyStream() {
            // AsyncHTTPClient's request bag traps here (RBSM:170) when the writer never started
            // and a response head has come.
            if !writerStarted && headReceived { Issue.record("resume after a head, with the writer never started") }
            writerStarted = true
            events.append("resume")
        }
        func pauseRequestBodyStream() { events.append("pause") }
        func requestBodyStreamSent() { events.append("bodySent") }
        func receiveResponseHead(_ head: HTTPResponseHead) {
            headReceived = true
            events.append("head \(head.status.code)")
        }
        func receiveResponseBodyParts(_ buffer: CircularBuffer<ByteBuffer>) {
            for var part in buffer { body.writeBuffer(&part) }
        }
        func receiveResponseEnd(_ buffer: CircularBuffer<ByteBuffer>?, trailers: HTTPHeaders?) {
            for var part in buffer ?? [] { body.writeBuffer(&part) }
            events.append(buffer?.isEmpty == false ? "end" : "end without parts")
        }
        func fail(_ error: any Error) { events.append("fail \(type(of: error))") }
    }

    /// Turns the channel unwritable as the request head goes out, as a parent connection over its
    /// write watermark does.
    final class UnwritableOnHead: ChannelOutboundHandler {
        typealias OutboundIn = HTTPClientRequestPart
        let channel: EmbeddedChannel

        init(_ channel: EmbeddedChannel) { self.channel = channel }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            context.write(data, promise: promise)
            if case .head = unwrapOutboundIn(data) {
                channel.isWritable = false
                channel.pipeline.syncOperations.fireChannelWritabilityChanged()
            }
        }
    }

    /// The guard and the handler in an embedded stream pipeline, with a request written.
    struct Pipeline {
        let channel = EmbeddedChannel()
        let request: RecordingRequest

        init(body: RequestFramingMetadata.Body = .stream, unwritableOnHead: Bool = false) throws {
            request = RecordingRequest(body: body)
            let sync = channel.pipeline.syncOperations
            if unwritableOnHead { try sync.addHandler(UnwritableOnHead(channel)) }
            try sync.addHandler(HTTP2StreamGuard())
            try sync.addHandler(HTTP2ClientRequestHandler(eventLoop: channel.eventLoop))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
            channel.pipeline.syncOperations.write(NIOAny(request as any HTTPExecutableRequest), promise: nil)
            channel.pipeline.syncOperations.flush()
        }

        func writeBody(_ text: String) {
            request.executor?.writeRequestBodyPart(
                .byteBuffer(ByteBuffer(string: text)), request: request, promise: nil)
            channel.embeddedEventLoop.run()
        }

        /// Response parts as swift-nio-http2's stream channel delivers one read: each part, then
        /// a single read-complete at the end (`writeInbound` would add one after each part).
        func receive(_ parts: [HTTPClientResponsePart], readComplete: Bool = true) {
            for part in parts { channel.pipeline.syncOperations.fireChannelRead(NIOAny(part)) }
            if readComplete { channel.pipeline.syncOperations.fireChannelReadComplete() }
        }

        func answer(_ status: HTTPResponseStatus, _ body: String) throws {
            receive([
                .head(HTTPResponseHead(version: .http2, status: status)), .body(ByteBuffer(string: body)), .end(nil),
            ])
        }

        func setWritable(_ writable: Bool) {
            channel.isWritable = writable
            channel.pipeline.syncOperations.fireChannelWritabilityChanged()
        }

        /// What swift-nio-http2's stream channel does on RST_STREAM: the error, then inactive.
        func reset(_ code: HTTP2ErrorCode) {
            channel.pipeline.syncOperations.fireErrorCaught(NIOHTTP2Errors.streamClosed(streamID: 1, errorCode: code))
            channel.pipeline.syncOperations.fireChannelInactive()
        }
    }

    /// An early 200 while the body uploads, then the stream turns unwritable (H2H:194) and
    /// writable (H2H:228), then RST_STREAM(NO_ERROR) (H2H:249), the close, more writability and
    /// AsyncHTTPClient's shutdown request (H2H:249): the answer, once, and no failure.
    @Test func anEarly2xxThenEverySiteIsTheAnswer() throws {
        let pipeline = try Pipeline()
        let (request, channel) = (pipeline.request, pipeline.channel)
        pipeline.writeBody("first part")
        try pipeline.answer(.ok, "ok\n")
        pipeline.setWritable(false)
        pipeline.setWritable(true)
        pipeline.writeBody("second part")
        pipeline.reset(.noError)
        pipeline.setWritable(false)
        pipeline.setWritable(true)
        channel.pipeline.syncOperations.triggerUserOutboundEvent(HTTPConnectionEvent.shutdownRequested, promise: nil)
        channel.embeddedEventLoop.run()
        #expect(request.events == ["headSent", "resume", "head 200", "pause", "resume", "end"])
        #expect(String(buffer: request.body) == "ok\n")
    }

    /// The shutdown request while the end is held: the handler still has its request and fails
    /// it as cancelled (the client is going away), closing the stream.
    @Test func aShutdownWhileTheEndIsHeldCancels() throws {
        let pipeline = try Pipeline()
        let (request, channel) = (pipeline.request, pipeline.channel)
        pipeline.writeBody("part")
        try pipeline.answer(.ok, "ok\n")
        channel.pipeline.syncOperations.triggerUserOutboundEvent(HTTPConnectionEvent.shutdownRequested, promise: nil)
        pipeline.reset(.cancel)
        channel.embeddedEventLoop.run()
        #expect(request.events == ["headSent", "resume", "head 200", "fail HTTPClientError"])
    }

    /// The body ends after a whole early 200 (the server read on): the handler ends the exchange
    /// itself, with the answer.
    @Test func theBodyEndingAfterAnEarly2xxEndsTheExchange() throws {
        let pipeline = try Pipeline()
        let (request, channel) = (pipeline.request, pipeline.channel)
        pipeline.writeBody("part")
        try pipeline.answer(.ok, "ok\n")
        request.executor?.finishRequestBodyStream(trailers: nil, request: request, promise: nil)
        channel.embeddedEventLoop.run()
        try channel.close().wait()
        #expect(request.events == ["headSent", "resume", "head 200", "end", "bodySent"])
        #expect(String(buffer: request.body) == "ok\n")
    }

    /// A 413 before the body ends: the answer at once, the stream closed, later events kept
    /// from the handler.
    @Test func anEarly413IsTheAnswerAndClosesTheStream() throws {
        let pipeline = try Pipeline()
        let (request, channel) = (pipeline.request, pipeline.channel)
        pipeline.writeBody("part")
        try pipeline.answer(.payloadTooLarge, "too large\n")
        #expect(!channel.isActive, "the guard closed the stream")
        pipeline.setWritable(true)
        channel.pipeline.syncOperations.fireErrorCaught(NIOHTTP2Errors.streamClosed(streamID: 1, errorCode: .noError))
        #expect(request.events.prefix(3) == ["headSent", "resume", "head 413"])
        #expect(request.events.last == "end")
        #expect(!request.events.contains { $0.hasPrefix("fail") })
        #expect(String(buffer: request.body) == "too large\n")
    }

    /// The head went out while the stream turned unwritable, so the body's writer never started;
    /// a whole 200 then, and writability (RBSM:170): the writer starts before the head reaches
    /// the request, and the reset later delivers the answer.
    @Test func a2xxHeadBeforeTheWriterStartsWaitsForIt() throws {
        let pipeline = try Pipeline(unwritableOnHead: true)
        try pipeline.answer(.ok, "ok\n")
        #expect(pipeline.request.events == ["headSent"], "the head is held")
        pipeline.setWritable(true)
        pipeline.reset(.noError)
        #expect(pipeline.request.events == ["headSent", "resume", "head 200", "end"])
        #expect(String(buffer: pipeline.request.body) == "ok\n")
    }

    /// The same, but the server resets before the stream ever turns writable: the answer all
    /// the same, and the writer never starts.
    @Test func a2xxHeadBeforeTheWriterStartsThenAReset() throws {
        let pipeline = try Pipeline(unwritableOnHead: true)
        try pipeline.answer(.ok, "ok\n")
        pipeline.reset(.noError)
        pipeline.setWritable(true)
        #expect(pipeline.request.events == ["headSent", "head 200", "end"])
    }

    /// The end arrives while the handler waits for its reader (no read since its last
    /// read-complete), then the reset, as swift-nio-http2 delivers both when a stream closes.
    /// The reader's demand, queued before, is met with the end; without it the exchange fails
    /// with `HTTP2EarlyAnswerCut`.
    @Test(arguments: [true, false])
    func anEndWhileTheReaderIsBehind(readerAsksInTime: Bool) throws {
        let pipeline = try Pipeline()
        let (request, channel) = (pipeline.request, pipeline.channel)
        pipeline.writeBody("part")
        pipeline.receive([.head(HTTPResponseHead(version: .http2, status: .ok)), .body(ByteBuffer(string: "ok"))])
        channel.read()  // the stream's auto-read: the handler now waits for demand
        if readerAsksInTime { request.executor?.demandResponseBodyStream(request) }
        // Delivered by the reset without a read, and without a read-complete.
        pipeline.receive([.body(ByteBuffer(string: "\n")), .end(nil)], readComplete: false)
        pipeline.reset(.noError)
        channel.embeddedEventLoop.run()
        if readerAsksInTime {
            #expect(request.events.last == "end")
            #expect(String(buffer: request.body) == "ok\n")
        } else {
            #expect(request.events.last == "fail HTTP2EarlyAnswerCut")
        }
    }

    /// A status code below 100, which the handler would take for an interim response and trap
    /// on: the exchange fails with `InvalidResponseStatus`, the stream is closed, and what
    /// follows is dropped.
    @Test func aStatusBelow100FailsTheExchange() throws {
        let pipeline = try Pipeline()
        pipeline.writeBody("part")
        try pipeline.answer(HTTPResponseStatus(statusCode: 99), "nonsense\n")
        #expect(!pipeline.channel.isActive, "the guard closed the stream")
        #expect(pipeline.request.events == ["headSent", "resume", "fail InvalidResponseStatus"])
        #expect(pipeline.request.body.readableBytes == 0)
    }

    /// A request without a body passes untouched: its end goes with its head.
    @Test func aRequestWithoutABodyPassesUntouched() throws {
        let pipeline = try Pipeline(body: .fixedSize(0))
        try pipeline.answer(.ok, "ok\n")
        pipeline.reset(.noError)
        #expect(pipeline.request.events == ["headSent", "head 200", "end"])
    }
}

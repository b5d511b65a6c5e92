import CourierTestServer
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A frame-level HTTP/2 client on swift-nio-http2, for checks no ordinary client can make: which
/// frames a stream received, in order (a response and then RST_STREAM(NO_ERROR), say), and the
/// GOAWAYs of the connection with their last-stream-id. Not Courier, not AsyncHTTPClient.
final class HTTP2FrameProbe: Sendable {
    /// What a stream received, in order.
    enum Event: Equatable, Sendable {
        case headers(status: String, endStream: Bool)
        case data(bytes: Int, endStream: Bool)
        /// A RST_STREAM frame with this code.
        case reset(HTTP2ErrorCode)
        /// NIOHTTP2 closed the stream with an error: after a RST_STREAM (with its code), or
        /// CANCEL for a stream a GOAWAY left unprocessed.
        case closed(HTTP2ErrorCode)
    }

    /// A GOAWAY the connection received.
    struct GoAway: Equatable, Sendable {
        var lastStreamID: Int
        var code: HTTP2ErrorCode
    }

    let channel: any Channel
    private let multiplexer: NIOLoopBound<NIOHTTP2Handler.StreamMultiplexer>
    private let recorder: ConnectionRecorder

    private init(
        channel: any Channel, multiplexer: NIOLoopBound<NIOHTTP2Handler.StreamMultiplexer>, recorder: ConnectionRecorder
    ) {
        self.channel = channel
        self.multiplexer = multiplexer
        self.recorder = recorder
    }

    /// Connects over TLS with ALPN `h2` only, trusting `certificate`. The connection closes
    /// itself after 30 s whatever happens, so a silent server cannot hang a test.
    static func connect(to server: TestServer, trusting certificate: NIOSSLCertificate) async throws -> HTTP2FrameProbe
    {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([certificate])
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let recorder = ConnectionRecorder()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: server.host, port: server.port).get()
        let multiplexer = try await channel.eventLoop.submit {
            let handlers = channel.pipeline.syncOperations
            try handlers.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
            var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
            connectionConfiguration.maximumConnectionGlitches = 1 << 20
            connectionConfiguration.maximumRecentlyResetStreams = 4096
            var streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
            streamConfiguration.streamResetFrameRateLimit.maximumCount = 1 << 20
            streamConfiguration.streamErrorRateLimit.maximumCount = 1 << 20
            let multiplexer = try handlers.configureHTTP2Pipeline(
                mode: .client, connectionConfiguration: connectionConfiguration,
                streamConfiguration: streamConfiguration
            ) { stream in stream.eventLoop.makeSucceededVoidFuture() }
            try handlers.addHandler(recorder)
            return NIOLoopBound(multiplexer, eventLoop: channel.eventLoop)
        }.get()
        // A bound against a hang, not a measure: under the parallel suite on a slow 2-core
        // machine, the 301 sequential streams of `manyEarlyAnswersKeepTheConnection` took over 30 s.
        // The suite's time limit (3 minutes) still ends a stuck test.
        channel.eventLoop.scheduleTask(in: .seconds(150)) { channel.close(promise: nil) }
        return HTTP2FrameProbe(channel: channel, multiplexer: multiplexer, recorder: recorder)
    }

    /// Opens a stream, sends `method path` and `bodyBytes` of body in one DATA frame, ending the
    /// request only when `endRequest`; returns the stream's recorder. With `endRequest` false the
    /// request stays open, as an upload the server has not read to the end.
    func send(
        _ method: String, _ path: String, extraHeaders: [(String, String)] = [], bodyBytes: Int = 0,
        endRequest: Bool = true
    ) async throws -> StreamRecorder {
        let stream = StreamRecorder()
        let multiplexer = self.multiplexer
        let streamChannel = try await channel.eventLoop.flatSubmit {
            multiplexer.value.createStreamChannel { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(stream) }
            }
        }.get()
        var headers: HPACKHeaders = [
            ":method": method, ":path": path, ":scheme": "https", ":authority": "127.0.0.1",
        ]
        headers.add(contentsOf: extraHeaders)
        let headersEnd = endRequest && bodyBytes == 0
        streamChannel.write(
            HTTP2Frame.FramePayload.headers(.init(headers: headers, endStream: headersEnd)), promise: nil)
        if bodyBytes > 0 {
            let body = ByteBuffer(repeating: 0x61, count: bodyBytes)
            streamChannel.write(
                HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(body), endStream: endRequest)), promise: nil)
        }
        streamChannel.flush()
        return stream
    }

    /// The GOAWAYs received so far.
    var goAways: [GoAway] { recorder.goAways }

    /// Waits (bounded by the 30 s connection limit) until the server has closed the connection.
    func waitForClose() async throws {
        try await channel.closeFuture.get()
    }

    func close() async {
        try? await channel.close()
    }

    /// Records one stream's frames until it closes.
    final class StreamRecorder: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTP2Frame.FramePayload

        private let state = NIOLockedValueBox<(events: [Event], closed: Bool)>(([], false))
        private let closed = NIOLockedValueBox<[CheckedContinuation<[Event], Never>]>([])

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let event: Event?
            switch unwrapInboundIn(data) {
            case .headers(let headers):
                event = .headers(status: headers.headers.first(name: ":status") ?? "", endStream: headers.endStream)
            case .data(let data):
                event = .data(bytes: data.data.readableBytes, endStream: data.endStream)
            case .rstStream(let code):
                event = .reset(code)
            default:
                event = nil
            }
            if let event { state.withLockedValue { $0.events.append(event) } }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if let closed = error as? NIOHTTP2Errors.StreamClosed {
                state.withLockedValue { $0.events.append(.closed(closed.errorCode)) }
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            let events = state.withLockedValue { state -> [Event] in
                state.closed = true
                return state.events
            }
            for waiter in closed.withLockedValue({ waiters in
                defer { waiters = [] }; return waiters
            }) {
                waiter.resume(returning: events)
            }
        }

        /// Whether a frame with END_STREAM arrived: the response is complete.
        var isAnswered: Bool {
            state.withLockedValue { state in
                state.events.contains { event in
                    switch event {
                    case .headers(let status, let endStream): return endStream && !status.hasPrefix("1")
                    case .data(_, let endStream): return endStream
                    case .reset, .closed: return false
                    }
                }
            }
        }

        /// The stream's events once it has closed (the connection's 30 s limit bounds the wait).
        func events() async -> [Event] {
            await withCheckedContinuation { continuation in
                let ready: [Event]? = state.withLockedValue { state in
                    if state.closed { return state.events }
                    closed.withLockedValue { $0.append(continuation) }
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }

    /// Records the connection-level frames NIOHTTP2 hands on (GOAWAY among them).
    final class ConnectionRecorder: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTP2Frame

        private let recorded = NIOLockedValueBox<[GoAway]>([])

        var goAways: [GoAway] { recorded.withLockedValue { $0 } }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .goAway(let lastStreamID, let code, _) = unwrapInboundIn(data).payload {
                recorded.withLockedValue { $0.append(GoAway(lastStreamID: Int(lastStreamID), code: code)) }
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // Stream errors surface here too (opening a stream after a GOAWAY, say); the
            // connection lives on, bounded by its 30 s limit.
        }
    }
}

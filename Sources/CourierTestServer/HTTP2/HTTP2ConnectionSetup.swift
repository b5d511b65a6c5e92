import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOSSL

/// Builds the pipeline of a connection accepted by a TLS server with HTTP/2 enabled: TLS,
/// then, by ALPN, either NIOHTTP2 with one ``HTTP2StreamHandler`` per stream or the HTTP/1
/// ``ConnectionHandler``.
enum HTTP2ConnectionSetup {
    static func configure(
        _ channel: any Channel, tls: NIOSSLContext, options: HTTP2Options, server: ServerState, router: Router
    ) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            let handlers = channel.pipeline.syncOperations
            try handlers.addHandler(ConnectionRegistration(server: server))
            try handlers.addHandler(NIOSSLServerHandler(context: tls))
        }.flatMap {
            channel.configureHTTP2SecureUpgrade(
                h2ChannelConfigurator: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try configureHTTP2(channel, options: options, server: server, router: router)
                    }
                },
                http1ChannelConfigurator: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if options.onlyHTTP2 {
                            // Whatever ALPN said: the client's HTTP/1.1 request fails the
                            // connection preface, and NIOHTTP2 answers with SETTINGS and GOAWAY.
                            try configureHTTP2(channel, options: options, server: server, router: router)
                            return
                        }
                        let handlers = channel.pipeline.syncOperations
                        try handlers.addHandler(
                            ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
                        try handlers.addHandler(ConnectionHandler(server: server, router: router))
                    }
                })
        }
    }

    private static func configureHTTP2(
        _ channel: any Channel, options: HTTP2Options, server: ServerState, router: Router
    ) throws {
        server.recordHTTP2 { $0.http2ConnectionsOpened += 1 }
        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: options.concurrentStreams),
            HTTP2Setting(parameter: .initialWindowSize, value: options.streamWindow),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 20),
        ]
        // Uploads on many streams at once should not wait on the connection's window.
        connectionConfiguration.targetWindowSize = max(options.streamWindow, 16 << 20)
        // Early answers reset streams whose client is still sending. NIOHTTP2 remembers only the
        // 32 latest resets by default, and late DATA for an older one, or many stream errors,
        // would end the connection; nginx has no such limits, so lift them for tests that reset
        // many streams at once.
        connectionConfiguration.maximumRecentlyResetStreams = 4096
        connectionConfiguration.maximumConnectionGlitches = 1 << 20
        var streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
        streamConfiguration.targetWindowSize = options.streamWindow
        // Streams are retired by the thousand in tests; nginx does not rate-limit that either.
        streamConfiguration.streamResetFrameRateLimit.maximumCount = 1 << 20
        streamConfiguration.streamErrorRateLimit.maximumCount = 1 << 20
        // Between TLS and NIOHTTP2 (added first, NIOHTTP2's handler goes after it).
        let floodWriter = HTTP2FloodWriter(server: server)
        try channel.pipeline.syncOperations.addHandler(floodWriter)
        let controller = HTTP2ConnectionController(
            server: server, streamLimit: options.streamLimit, floodWriter: floodWriter)
        let boundController = NIOLoopBound(controller, eventLoop: channel.eventLoop)
        _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
            mode: .server, connectionConfiguration: connectionConfiguration, streamConfiguration: streamConfiguration
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(
                    HTTP2StreamHandler(server: server, router: router, connection: boundController.value))
            }
        }
        try channel.pipeline.syncOperations.addHandler(controller)
    }
}

/// Counts a connection in the server's registry from the moment it is accepted, whichever
/// protocol it then speaks, so `shutdown()` closes it; it closes connections accepted while
/// the server is shutting down.
final class ConnectionRegistration: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let server: ServerState

    init(server: ServerState) {
        self.server = server
    }

    func channelActive(context: ChannelHandlerContext) {
        if !server.connectionOpened(context.channel) {
            context.close(promise: nil)
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Idempotent: the HTTP/1 handler may have unregistered the connection already.
        server.connectionClosed(context.channel)
        context.fireChannelInactive()
    }
}

import AsyncHTTPClient
import CourierCore
import NIOCore
import NIOHTTP1
import NIOSSL

extension AsyncHTTPClientTransport {
    /// How the transport connects: pool size, deadlines, HTTP versions, proxy, TLS, decompression.
    ///
    /// Defaults fail early rather than wait forever: a 10 s connect timeout, a 60 s read
    /// timeout (no byte for that long) and no whole-request deadline unless a request sets
    /// `Request.timeoutInterval` or ``requestTimeout`` is given.
    public struct Configuration: Sendable {
        /// HTTP/1.1 connections kept per host (AsyncHTTPClient's soft limit); HTTP/2 multiplexes instead.
        public var maximumConnectionsPerHost: Int = 8
        /// How long idle keep-alive connections stay in the pool.
        public var idleTimeout: TimeAmount = .seconds(60)
        /// Deadline for making a connection (TCP, and TLS when used).
        public var connectTimeout: TimeAmount? = .seconds(10)
        /// Longest wait for the next byte of a response.
        public var readTimeout: TimeAmount? = .seconds(60)
        /// Deadline for a whole exchange when the request sets none; nil means none.
        public var requestTimeout: TimeAmount?
        /// HTTP/2 where the server offers it over TLS (ALPN), else HTTP/1.1; false forces HTTP/1.1.
        ///
        /// Requests with bodies ride HTTP/2 too, whatever their method. A server may answer
        /// before the upload has ended and then reset the stream (RFC 9113 §8.1; nginx does for
        /// `return`, 401, 413 and redirects): the answer is the response, and the rest of the
        /// body is not sent. (AsyncHTTPClient 1.37 alone traps there, its issue 922; a handler
        /// of Courier's in each stream keeps it out of that state.)
        ///
        /// A response read as it arrives (a download, a stream) rides HTTP/2 like any other: a
        /// reader slower than the server holds back its stream's flow-control window (about
        /// 9 MiB waits for it, AsyncHTTPClient's 8 MiB stream window and the read-ahead), not the
        /// body, and the other streams on the connection go on.
        public var allowsHTTP2: Bool = true
        /// The forward proxies, per scheme, with the hosts that go direct; nil sends everything
        /// direct. `ProxyConfiguration.fromEnvironment(_:)` reads curl's variables.
        public var proxy: ProxyConfiguration?
        /// The proxy of this configuration's clients (AsyncHTTPClient's is per client; see
        /// `ProxyRoutes`, which makes one set of clients per proxy server).
        var clientProxy: HTTPClient.Configuration.Proxy?
        /// Connections go to a forward proxy, and each request's target is written in absolute
        /// form (see `AbsoluteFormForwarding`); set by `ProxyRoutes` only.
        var forwardsInAbsoluteForm = false
        /// TLS settings (trust roots, pinning verification, client certificates); nil uses the defaults.
        /// Its `minimumTLSVersion` is raised to ``minimumTLSVersion`` when lower.
        public var tlsConfiguration: TLSConfiguration?
        /// The oldest TLS version a connection may use: TLS 1.2 by default, as curl and httpie
        /// require, since RFC 8996 deprecates TLS 1.0 and 1.1 (swift-nio-ssl's client default
        /// accepts 1.0). It is a floor over ``tlsConfiguration``; set `.tlsv1` or `.tlsv11`
        /// to reach a server that offers nothing newer.
        public var minimumTLSVersion: TLSVersion = .tlsv12
        /// Let AsyncHTTPClient retry failed connection attempts until the connect timeout. Off by
        /// default so that a refused connection fails at once; the session's `RetryPolicy` retries instead.
        public var retriesConnectionEstablishment: Bool = false
        /// Ask for and decode compressed bodies: on by default, as browsers and URLSession do.
        ///
        /// When on, requests that set no `Accept-Encoding` go out with `Accept-Encoding: gzip,
        /// deflate`, and bodies whose `Content-Encoding` is `gzip` or `deflate` are decoded as they
        /// arrive (buffered, streamed and downloaded alike), under ``decompressionRatioLimit``.
        /// The response head is left as the server sent it, so `Content-Encoding` still names the
        /// coding and `Content-Length` (`ResponseHead.expectedContentLength`) counts the encoded
        /// bytes on the wire, not the bytes delivered: progress then counts decoded bytes received
        /// and reports the total as unknown. A caller that sets `Accept-Encoding` itself gets what
        /// it asked for, decoded when it is gzip or deflate. Turn it off to get the bytes as sent
        /// (and no `Accept-Encoding` is added).
        public var decompressesResponses: Bool = true
        /// The most decoded bytes per encoded byte received, checked as the body is decoded once
        /// it has passed ``decompressionRatioFreeSize``; default 100. A body past both fails with
        /// `CourierError.Code.decompressionLimitExceeded` instead of filling memory or disk (a
        /// "decompression bomb": a few kilobytes of deflate expand to gigabytes, over 1000:1).
        /// `Int.max` turns the check off.
        public var decompressionRatioLimit: Int = 100
        /// Decoded bytes let through whatever the ratio; default 1 GiB. Ordinary bodies compress
        /// well past 100:1 (nginx's `gzip on` gives a repetitive log about 120:1, `gzip -9` over
        /// 200:1), so the ratio alone would refuse them; a bomb is a body whose decoded size is
        /// absurd as well. A buffered response is also held to the session's
        /// `maximumBufferedResponseSize`, which counts decoded bytes.
        public var decompressionRatioFreeSize: Int = 1 << 30

        /// Let a large body that arrives fast wake the event loop once per mebibyte rather than
        /// once per TCP segment, by raising the socket's receive low-water mark (`SO_RCVLOWAT`)
        /// while it streams in: on by default; plain HTTP/1.1 on Linux 4.18 and later only.
        ///
        /// Raised for a body with a `Content-Length` after a read of 64 KiB or more, never above
        /// the bytes still due; back at one byte within about 4 ms when the body stalls, so bytes
        /// that arrived are never held back longer, and before the response ends. On a 1 GiB
        /// stream over loopback it took `stream(_:)` from 0.7–0.9× curl's rate to 1.1–1.6×
        /// (BENCHMARKS.md). Turn it off to keep the kernel's default of waking on every arrival.
        public var raisesReceiveLowWaterMark: Bool = true
        /// Let the event loop that delivers a download's body write its file too, as curl and a
        /// plain `recv()` + `write()` loop do: on by default.
        ///
        /// A download's first write is made on its task; when it took under 20 ms, the rest of
        /// the body is written on the exchange's event loop as it arrives (the one that reads the
        /// connection when AsyncHTTPClient opened it for this exchange; a pooled connection may
        /// be on another), one thread doing what took two (1 GiB to disk on two cores: 0.9–1.0×
        /// a C `recv()` + `write()` loop's rate instead of 0.8× over plain HTTP, and about 1.5×
        /// the rate it had over TLS; BENCHMARKS.md). Each turn of writing there, progress report
        /// included, holds up the loop and the other connections on it; the first turn that
        /// takes 20 ms or more (dirty-page throttling, a slow or remote file system, a slow
        /// progress handler) gives the rest of the body back to the task for good. That turn lasts
        /// as long as its slow write or handler does, so download progress handlers, which then run
        /// on the event loop, must not block (`EventLoopFuture.wait()` there traps). A pause, a
        /// `didReceiveData` hook, a decoded body, a response stored by `HTTPCache` and a request
        /// whose body streams (AsyncHTTPClient's async API) keep the writes on the task. Turn it
        /// off to keep every file write off the event loops.
        public var writesDownloadsOnEventLoop: Bool = true

        /// The default configuration.
        public init() {}

        /// ``tlsConfiguration`` (or the defaults) with at least ``minimumTLSVersion``.
        var flooredTLSConfiguration: TLSConfiguration {
            var tls = tlsConfiguration ?? .makeClientConfiguration()
            if Self.rank(tls.minimumTLSVersion) < Self.rank(minimumTLSVersion) {
                tls.minimumTLSVersion = minimumTLSVersion
            }
            if let maximum = tls.maximumTLSVersion, Self.rank(maximum) < Self.rank(tls.minimumTLSVersion) {
                // A maximum below the floor would refuse every server; the floor wins.
                tls.maximumTLSVersion = tls.minimumTLSVersion
            }
            return tls
        }

        private static func rank(_ version: TLSVersion) -> Int {
            [TLSVersion.tlsv1, .tlsv11, .tlsv12, .tlsv13].firstIndex(of: version) ?? 0
        }

        /// The client configuration: no read timeout (`StreamingResponseDelegate` keeps the one
        /// idle-read timer for ``readTimeout``), and every connection and HTTP/2 stream fitted
        /// with Courier's handlers through AsyncHTTPClient's debug initializers, the only hook
        /// into its pipelines; each runs on its channel's event loop.
        func makeClientConfiguration(connectionLedger: ConnectionLedger) -> HTTPClient.Configuration {
            var configuration = HTTPClient.Configuration(
                tlsConfiguration: flooredTLSConfiguration,
                redirectConfiguration: .disallow,
                timeout: .init(connect: connectTimeout, read: nil),
                connectionPool: .init(
                    idleTimeout: idleTimeout,
                    concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, maximumConnectionsPerHost)),
                proxy: clientProxy,
                // The transport decodes bodies itself (see `send(_:context:)`).
                decompression: .disabled)
            configuration.httpVersion = allowsHTTP2 ? .automatic : .http1Only
            configuration.connectionPool.retryConnectionEstablishment = retriesConnectionEstablishment
            // AsyncHTTPClient would take the process's bootstrapped tracer and make a span of its
            // own per request, beside the session's task and attempt spans (see
            // `SessionManager.Configuration.tracer`): its tracing is always off, by value.
            configuration.tracing.tracer = nil
            let mismatch = NoCommonProtocol(
                offered: configuration.httpVersion == .automatic ? ["h2", "http/1.1"] : ["http/1.1"],
                remedy: "allowsHTTP2 (courier: without --http1.1)")
            // Every HTTP/1.1 connection gets: beside the request encoder, the ledger's probe
            // and, through a forward proxy, an AbsoluteFormTarget between them (so that the probe
            // sees the head as AsyncHTTPClient gives it to the delegate); after the response
            // decoder a ResponseStatusGuard, so that no client of the transport meets
            // AsyncHTTPClient's trap on a status below 100 (an HTTP/2 stream's guard does the
            // same); over TLS an HTTP2OnlyServerDetector before it, for the server that speaks
            // only HTTP/2 to a client that offered only HTTP/1.1; and wide reads and the receive
            // low-water mark over plain HTTP (``ReceiveLowWaterMark``).
            configuration.http1_1ConnectionDebugInitializer = {
                [forwardsInAbsoluteForm, raisesReceiveLowWaterMark] channel in
                channel.runOnLoop { channel in
                    let sync = channel.pipeline.syncOperations
                    let isTLS = (try? sync.handler(type: NIOSSLClientHandler.self)) != nil
                    if !isTLS { Self.widenReads(of: channel) }
                    if let encoder = try? sync.handler(type: HTTPRequestEncoder.self) {
                        let probe = RequestHeadProbe(ledger: connectionLedger, connection: channel)
                        try? sync.addHandler(probe, position: .after(encoder))
                        if forwardsInAbsoluteForm {
                            try? sync.addHandler(AbsoluteFormTarget(), position: .after(encoder))
                        }
                    }
                    guard let decoder = try? sync.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self) else {
                        return
                    }
                    if !isTLS, raisesReceiveLowWaterMark, ReceiveLowWaterMark.isSupported {
                        try? sync.addHandler(ReceiveLowWaterMark(), position: .after(decoder))
                    }
                    try? sync.addHandler(ResponseStatusGuard(), position: .after(decoder))
                    if isTLS { try? sync.addHandler(HTTP2OnlyServerDetector(mismatch), position: .before(decoder)) }
                }
            }
            // Every HTTP/2 connection gets an HTTP2ConnectionGuard, which closes it when the server
            // floods it or its protocol fails (NIOHTTP2 would otherwise buffer what follows), with
            // an HTTP2StreamWindow, so that a stalled stream holds a small window of its own bytes,
            // and the probe its streams' guards note their requests with.
            configuration.http2ConnectionDebugInitializer = { channel in
                channel.runOnLoop { HTTP2ConnectionGuard.install(onConnection: $0, ledger: connectionLedger) }
            }
            // Every HTTP/2 stream gets an HTTP2StreamGuard, right after its codec (it must stay
            // next to AsyncHTTPClient's request handler), so that request bodies may ride HTTP/2.
            configuration.http2StreamChannelDebugInitializer = { $0.runOnLoop(HTTP2StreamGuard.install(onStream:)) }
            return configuration
        }

        /// Lets one read from the socket take up to a mebibyte when that much is waiting (swift-nio's
        /// default stops at 64 KiB). A large body then costs a sixteenth of the reads, each of which
        /// runs the HTTP decoder, AsyncHTTPClient's state machine, the delegate and a wake-up of the
        /// reading task; small responses are unchanged, since the size only grows after reads that
        /// filled the buffer. Memory stays bounded by the delegate's backpressure (a mebibyte held).
        ///
        /// Plain HTTP/1.1 connections only: measured against nginx (512 MiB, six runs each), wide
        /// reads over TLS took 0.45-0.83 s and 65-103 MiB against 0.32-0.51 s and 51-57 MiB without,
        /// and over HTTP/2 1.6-2.1 s and 124-173 MiB against 0.86-1.09 s and 63-73 MiB.
        private static func widenReads(of channel: any Channel) {
            let allocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 1 << 20)
            try? channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: allocator)
        }
    }
}

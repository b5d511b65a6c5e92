import AsyncHTTPClient
import CourierCore
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOSSL

/// What AsyncHTTPClient 1.37 does not say about a request's connection (new or reused, the
/// peer's address), learned from its connection debug initializers.
///
/// AsyncHTTPClient has no public API for a request's connection. Its debug initializers see each
/// new HTTP/1.1 connection and each HTTP/2 stream, though, so a small handler goes into every
/// HTTP/1.1 pipeline, next to the request encoder (``RequestHeadProbe``; each HTTP/2 stream's
/// ``HTTP2StreamGuard`` does the same), and notes the request head each one writes together
/// with what the connection knows (how many requests it carried before, its remote address).
/// The delegate takes the note whose head equals the one AsyncHTTPClient hands it in
/// `didSendRequestHead`. Two identical requests in flight at once (same method, target and
/// headers) may swap notes; a note that nobody takes (a request that failed as its head went
/// out) is dropped once ``capacity`` newer ones wait. Only the delegate-API clients carry the
/// handler: the async API's requests, and those through a proxy route, report no connection.
final class ConnectionLedger: Sendable {
    struct Note: Sendable {
        var head: HTTPRequestHead
        var info: ConnectionInfo
    }

    /// Notes kept for requests whose delegate has not yet asked; origins whose loop is kept.
    static let capacity = 64

    private let notes = NIOLockedValueBox<[Note]>([])
    /// The event loop of each origin's HTTP/2 connection, by the Host header its streams send.
    private let http2Loops = NIOLockedValueBox<[String: any EventLoop]>([:])

    init() {
        notes.withLockedValue { $0.reserveCapacity(Self.capacity) }
    }

    /// A client configuration whose connections note every request head here, and whose plain
    /// HTTP/1.1 connections read wide and, with `raisingLowWaterMarks`, raise their receive
    /// low-water mark for fast bodies (``ReceiveLowWaterMark``): the debug initializers are the
    /// only hook into the pipeline.
    func instrument(_ configuration: HTTPClient.Configuration, raisingLowWaterMarks: Bool)
        -> HTTPClient.Configuration
    {
        var configuration = configuration
        // Each initializer runs on its channel's event loop. A pipeline that does not look as
        // expected gets no probe (its requests report no connection) rather than failing.
        // Installed first, beside the request encoder, so that a handler the configuration
        // already adds there (an absolute-form rewriter) sits between them: the probe then sees
        // the head as AsyncHTTPClient gives it to the delegate.
        let previousInitializer = configuration.http1_1ConnectionDebugInitializer
        configuration.http1_1ConnectionDebugInitializer = { [self] channel in
            channel.runOnLoop(then: previousInitializer) {
                let sync = channel.pipeline.syncOperations
                if (try? sync.handler(type: NIOSSLClientHandler.self)) == nil {
                    Self.widenReads(of: channel)
                    if raisingLowWaterMarks, ReceiveLowWaterMark.isSupported,
                        let decoder = try? sync.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self)
                    {
                        try? sync.addHandler(ReceiveLowWaterMark(), position: .after(decoder))
                    }
                }
                guard let encoder = try? sync.handler(type: HTTPRequestEncoder.self) else { return }
                let counter = ConnectionUseCounter(remoteAddress: Self.describe(channel.remoteAddress))
                let probe = RequestHeadProbe(ledger: self, counter: counter)
                try? sync.addHandler(probe, position: .after(encoder))
            }
        }
        let previousConnectionInitializer = configuration.http2ConnectionDebugInitializer
        configuration.http2ConnectionDebugInitializer = { channel in
            channel.runOnLoop(then: previousConnectionInitializer) {
                let counter = ConnectionUseCounter(remoteAddress: Self.describe(channel.remoteAddress))
                try? channel.pipeline.syncOperations.addHandler(counter)
            }
        }
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

    func record(_ head: HTTPRequestHead, _ info: ConnectionInfo) {
        notes.withLockedValue { notes in
            if notes.count >= Self.capacity { notes.removeFirst() }
            notes.append(Note(head: head, info: info))
        }
    }

    /// Notes that requests with this Host header ride an HTTP/2 connection on `loop`.
    func noteHTTP2Loop(_ loop: any EventLoop, host: String) {
        http2Loops.withLockedValue { loops in
            guard loops[host] !== loop else { return }
            if loops.count >= Self.capacity { loops.removeAll(keepingCapacity: true) }
            loops[host] = loop
        }
    }

    /// Where `request`'s delegate runs: on the loop of its origin's HTTP/2 connection when one
    /// was seen, else wherever AsyncHTTPClient likes. Why: its request bag and the delegate run
    /// on the task's loop, and each callback from a connection on another loop (head sent, body
    /// resumed, each body write, response head, parts, end) is a hop with its allocations and
    /// wake-up; over HTTP/2 every request to the origin shares the one connection, so one loop
    /// serves them all without hops (BENCHMARKS.md, issue 44). HTTP/1.1 origins keep their
    /// connections spread over the loops; the transport asks only for bodies collected in
    /// memory, since a body read as it arrives (a download writing its file) gains more from a
    /// second core than it loses to hops.
    func eventLoopPreference(for request: HTTPClient.Request) -> HTTPClient.EventLoopPreference {
        guard request.scheme == "https" else { return .indifferent }
        let host = request.port == 443 ? request.host : "\(request.host):\(request.port)"
        return http2Loops.withLockedValue { $0[host] }.map { .delegate(on: $0) } ?? .indifferent
    }

    /// The note for a request with this head, taken out of the ledger; nil when there is none.
    func take(_ head: HTTPRequestHead) -> ConnectionInfo? {
        notes.withLockedValue { notes in
            guard let index = notes.firstIndex(where: { Self.isSame($0.head, head) }) else { return nil }
            return notes.remove(at: index).info
        }
    }

    /// Whether two heads are the same request head, fields in the same order: the probe and the
    /// delegate see one value, so order never differs. (`HTTPHeaders ==` ignores order at the
    /// cost of sets and sorted arrays, about a dozen allocations a call.)
    private static func isSame(_ first: HTTPRequestHead, _ second: HTTPRequestHead) -> Bool {
        guard first.uri == second.uri, first.method == second.method, first.headers.count == second.headers.count
        else { return false }
        return zip(first.headers, second.headers).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// `127.0.0.1:8080`, `[::1]:443`; nil for an address without an IP and port.
    static func describe(_ address: SocketAddress?) -> String? {
        guard let address, let ip = address.ipAddress, let port = address.port else { return nil }
        if case .v6 = address { return "[\(ip)]:\(port)" }
        return "\(ip):\(port)"
    }
}

/// How many requests a connection has carried; on an HTTP/2 connection, shared by its streams.
/// Touched only on the connection's event loop. It carries the connection's remote address as
/// the probes report it, described once per connection rather than once per HTTP/2 stream.
final class ConnectionUseCounter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    var requests = 0
    let remoteAddress: String?

    init(remoteAddress: String?) {
        self.remoteAddress = remoteAddress
    }
}

/// Notes each request head written on its channel in the ledger, with the connection's facts.
final class RequestHeadProbe: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private let ledger: ConnectionLedger
    private let counter: ConnectionUseCounter

    init(ledger: ConnectionLedger, counter: ConnectionUseCounter) {
        self.ledger = ledger
        self.counter = counter
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head(let head) = unwrapOutboundIn(data) {
            ledger.record(head, ConnectionInfo(reused: counter.requests > 0, remoteAddress: counter.remoteAddress))
            counter.requests += 1
        }
        context.write(data, promise: promise)
    }
}

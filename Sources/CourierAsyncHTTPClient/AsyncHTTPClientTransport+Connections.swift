import AsyncHTTPClient
import CourierCore
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2

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
/// out) is dropped once ``capacity`` newer ones wait.
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

/// Notes each request head written on its connection in the ledger, with the connection's
/// facts (how many requests it carried before, its remote address): a handler beside the request
/// encoder of an HTTP/1.1 connection, and on an HTTP/2 connection one shared by its streams,
/// whose ``HTTP2StreamGuard``s call ``note(_:)`` (streams see their parts, not the connection's
/// frames). Touched only on the connection's event loop.
final class RequestHeadProbe: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    let ledger: ConnectionLedger
    /// Described once per connection rather than once per HTTP/2 stream.
    private let remoteAddress: String?
    private var requests = 0

    init(ledger: ConnectionLedger, connection: any Channel) {
        self.ledger = ledger
        self.remoteAddress = ConnectionLedger.describe(connection.remoteAddress)
    }

    /// Notes `head`, written on this connection, in the ledger.
    func note(_ head: HTTPRequestHead) {
        ledger.record(head, ConnectionInfo(reused: requests > 0, remoteAddress: remoteAddress))
        requests += 1
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head(let head) = unwrapOutboundIn(data) { note(head) }
        context.write(data, promise: promise)
    }
}

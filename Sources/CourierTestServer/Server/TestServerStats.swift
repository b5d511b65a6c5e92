import NIOHTTP1

/// A request head exactly as the server decoded it: method, target, version and every
/// header line in arrival order with its original spelling.
package struct RecordedRequestHead: Sendable, Equatable {
    /// The request method, such as `POST`.
    package var method: String
    /// The request target as sent, such as `/post?a=1`.
    package var uri: String
    /// `HTTP/1.1` or `HTTP/1.0`.
    package var version: String
    /// Header lines in arrival order, names as sent.
    package var headers: [HeaderLine]

    /// One header line.
    package struct HeaderLine: Sendable, Equatable {
        /// The field name as sent.
        package var name: String
        /// The field value as decoded.
        package var value: String
    }

    /// All values of the header `name` (case-insensitive), in arrival order.
    package func values(_ name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// The first value of the header `name` (case-insensitive).
    package func value(_ name: String) -> String? { values(name).first }

    /// The head re-serialized as HTTP/1.1 text (request line, header lines, blank line).
    package var raw: String {
        var text = "\(method) \(uri) \(version)\r\n"
        for header in headers { text += "\(header.name): \(header.value)\r\n" }
        return text + "\r\n"
    }

    init(_ head: HTTPRequestHead) {
        method = head.method.rawValue
        uri = head.uri
        version = "HTTP/\(head.version.major).\(head.version.minor)"
        headers = head.headers.map { HeaderLine(name: $0.name, value: $0.value) }
    }
}

/// Counters a test can read to check what reached the server.
///
/// Every figure about a request is recorded before the first byte of its response is written,
/// except ``requestsServed``, which is recorded before the last one: a client that has read a
/// whole response finds it counted. A client's close reaches the server some time after the
/// client closes, so ``connectionsOpen`` has to be polled (with a bound), not read once.
public struct TestServerStats: Sendable {
    /// TCP connections accepted since start (or the last reset).
    public var connectionsAccepted = 0
    /// Connections open right now, as far as the server has seen.
    package var connectionsOpen = 0
    /// Request heads received.
    public var requestsReceived = 0
    /// Responses written in full, or cut short or malformed on purpose by a fault endpoint.
    /// Requests closed or left without any answer are not counted.
    public var requestsServed = 0
    /// The most recent request head, for header assertions.
    package var lastRequestHead: RecordedRequestHead?
    /// The last ``recentHeadLimit`` request heads, oldest first (a redirect chain, a retry series).
    package var recentRequestHeads: [RecordedRequestHead] = []

    /// The most `/long-poll` requests of one group held at once.
    public var longPollsHeldPeak = 0

    /// How many heads ``recentRequestHeads`` keeps.
    package static let recentHeadLimit = 100

    // HTTP/2 (a server started with `http2:`). Streams also count in ``requestsReceived`` and
    // ``requestsServed``; every figure is recorded before the frame it describes is written.

    /// Connections that negotiated `h2` by ALPN (each also counts in ``connectionsAccepted``).
    public var http2ConnectionsOpened = 0
    /// Streams whose request head the server took up (at or below any GOAWAY's last-stream-id).
    public var http2StreamsAccepted = 0
    /// Streams answered with a response that ended with END_STREAM.
    public var http2StreamsServed = 0
    /// RST_STREAM frames the server sent, whatever the code (the NO_ERROR after an early answer too).
    public var http2StreamsReset = 0
    /// Of ``http2StreamsReset``, those with REFUSED_STREAM.
    package var http2StreamsRefused = 0
    /// GOAWAY frames the server sent (retirement after N streams, or a fault).
    public var http2GoAwaysSent = 0
    /// Bytes of flood frames (`/fault/h2-flood`) the server wrote to clients that took them.
    package var http2FloodBytesWritten = 0
    /// Each HTTP/2 response's flow, by its request's target (path and query): what the server
    /// wrote and what the client's flow-control window let it write.
    package var http2ResponseFlows: [String: HTTP2ResponseFlow] = [:]
}

extension TestServerStats {
    /// How many targets ``http2ResponseFlows`` keeps: a long run of distinct requests (a
    /// benchmark) must not grow the server.
    package static let responseFlowLimit = 1_000

    /// Updates the flow of the response to `target`, unless ``responseFlowLimit`` others are kept.
    mutating func updateFlow(of target: String, _ update: (inout HTTP2ResponseFlow) -> Void) {
        guard http2ResponseFlows[target] != nil || http2ResponseFlows.count < Self.responseFlowLimit else { return }
        update(&http2ResponseFlows[target, default: HTTP2ResponseFlow()])
    }
}

/// One HTTP/2 response's body as the server sent it and the client's window allowed it.
package struct HTTP2ResponseFlow: Sendable, Hashable {
    /// DATA payload bytes handed to NIOHTTP2, including those it holds until the client's
    /// window lets them out.
    package var bodyBytesQueued = 0
    /// Of ``bodyBytesQueued``, those written to the connection: a frame held back by flow
    /// control counts only once NIOHTTP2 has let all of it out.
    package var bodyBytesWritten = 0
    /// What the client's WINDOW_UPDATE frames for the stream added to its window, in all.
    package var windowIncrements = 0
    /// How many WINDOW_UPDATE frames the client sent for the stream.
    package var windowUpdates = 0
}

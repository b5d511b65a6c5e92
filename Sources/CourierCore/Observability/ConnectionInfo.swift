/// What a transport could tell of the connection one exchange went over.
///
/// Every field is optional: a transport reports what it knows and leaves the rest nil rather
/// than guess (see `AsyncHTTPClientTransport` for what it can see).
public struct ConnectionInfo: Sendable, Hashable {
    /// True when the exchange went over a connection that had carried an earlier one (HTTP/1.1
    /// keep-alive, or another stream of the same HTTP/2 connection); false for a new connection.
    public var reused: Bool?
    /// The peer's address as `host:port` (`127.0.0.1:8080`, `[::1]:443`): the proxy's when a
    /// proxy is used.
    public var remoteAddress: String?
    /// The HTTP version of the response.
    public var httpVersion: HTTPProtocolVersion?

    /// Makes a description; unknown fields stay nil.
    public init(reused: Bool? = nil, remoteAddress: String? = nil, httpVersion: HTTPProtocolVersion? = nil) {
        self.reused = reused
        self.remoteAddress = remoteAddress
        self.httpVersion = httpVersion
    }
}

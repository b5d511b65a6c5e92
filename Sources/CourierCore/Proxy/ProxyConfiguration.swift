import Foundation

/// Which forward proxy each request goes through: one for `http://` URLs, one for `https://`
/// URLs, and the hosts that go direct (``NoProxyList``), as curl's and httpie's proxy settings.
///
/// Set it as `AsyncHTTPClientTransport.Configuration.proxy`. An HTTP proxy gets plain
/// `http://` requests as curl's `-x` sends them, in absolute form (`GET http://host/path`, over
/// keep-alive connections to the proxy that serve every origin behind it), and opens a
/// `CONNECT host:port` tunnel for `https://` URLs, through which TLS runs end to end. Basic
/// credentials go in `Proxy-Authorization`, which is the proxy's to consume (RFC 9110 §11.7.1:
/// it does not forward it; in a tunnel the origin never sees it), and a 407 from the proxy is
/// ``CourierError/Code/proxyFailed`` either way.
///
/// Build one by hand, or read the environment as curl does with ``fromEnvironment(_:)``:
///
/// ```swift
/// var transport = AsyncHTTPClientTransport.Configuration()
/// transport.proxy = try ProxyConfiguration.fromEnvironment()
/// transport.proxy = ProxyConfiguration(
///     http: .init(host: "proxy.internal", port: 3128, username: "me", password: "secret"),
///     https: .init(host: "proxy.internal", port: 3128), noProxy: NoProxyList("localhost,.corp"))
/// ```
///
/// Printing it never shows a password.
public struct ProxyConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// The proxy for `http://` URLs, or nil to send them direct.
    public var http: Server?
    /// The proxy for `https://` URLs, or nil to send them direct.
    public var https: Server?
    /// The hosts that go direct whatever the two servers say.
    public var noProxy: NoProxyList

    /// Makes a configuration; one server for both schemes is `ProxyConfiguration(http: s, https: s)`.
    public init(http: Server? = nil, https: Server? = nil, noProxy: NoProxyList = NoProxyList("")) {
        self.http = http
        self.https = https
        self.noProxy = noProxy
    }

    /// The proxy `url` goes through, or nil when it goes direct: its scheme has no proxy, the
    /// no-proxy list matches its host, or it is not an `http`/`https` URL (unix sockets never
    /// use a proxy).
    public func server(for url: URL) -> Server? {
        let server: Server?
        switch url.scheme?.lowercased() {
        case "http": server = http
        case "https": server = https
        default: return nil
        }
        guard let server, !noProxy.matches(url) else { return nil }
        return server
    }

    /// The servers and the list, without passwords.
    public var description: String {
        let http = self.http.map(\.description) ?? "direct"
        let https = self.https.map(\.description) ?? "direct"
        return "http: \(http), https: \(https), no proxy: \"\(noProxy.description)\""
    }
}

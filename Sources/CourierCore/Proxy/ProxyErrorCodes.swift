/// The codes of proxy settings and of proxies that refuse to carry a request.
extension CourierError.Code {
    /// A proxy URL or `*_proxy` environment variable cannot be used: an unknown scheme, no
    /// host, a bad port, or credentials for a SOCKS proxy.
    ///
    /// Thrown by ``ProxyConfiguration/Server/init(url:)`` and
    /// ``ProxyConfiguration/fromEnvironment(_:)``; the message names the variable and redacts
    /// the password.
    public static let invalidProxyConfiguration = CourierError.Code("invalidProxyConfiguration")

    /// The proxy would not carry the request: it asked for credentials (`407`), or answered
    /// `CONNECT` with anything but a 2xx.
    ///
    /// Thrown by `AsyncHTTPClientTransport` for a request routed through a proxy; the message
    /// names the proxy without its password.
    public static let proxyFailed = CourierError.Code("proxyFailed")
}

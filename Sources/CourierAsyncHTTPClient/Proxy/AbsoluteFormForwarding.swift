import CourierCore
import Foundation
import NIOCore
import NIOHTTP1

/// Plain-HTTP requests through an HTTP proxy, as curl and httpie send them: to the proxy
/// itself, the request target in absolute form (`GET http://origin/path HTTP/1.1`, RFC 9112
/// §3.2.2) with the origin's `Host` and the proxy's `Proxy-Authorization`.
///
/// AsyncHTTPClient 1.37 opens every proxied connection with `CONNECT`, which proxies commonly
/// allow to port 443 only (Squid's default), so plain `http://` URLs would be refused. Instead
/// the request goes to a transport whose connections are to the proxy, and
/// ``AbsoluteFormTarget`` writes each request line's target in absolute form from the `Host`
/// field. Those connections are shared by every origin reached through the proxy.
enum AbsoluteFormForwarding {
    /// `request` as sent to `server`: its URL pointed at the proxy, its `Host` the origin's
    /// (unless the request sets one), and Basic credentials for the proxy when it has them.
    /// - Throws: `CourierError` `.invalidURL` when the URL cannot be pointed at the proxy.
    static func request(_ request: Request, to server: ProxyConfiguration.Server) throws -> Request {
        var forwarded = request
        guard var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false),
            let origin = originHost(of: request.url)
        else {
            throw CourierError(
                .invalidURL, "\(request.url.absoluteString) cannot be sent through a proxy: it has no host",
                offendingInput: request.url.absoluteString)
        }
        components.user = nil
        components.password = nil
        components.host = server.host.contains(":") ? "[\(server.host)]" : server.host
        components.port = server.port
        if components.percentEncodedPath.isEmpty { components.percentEncodedPath = "/" }
        guard let url = components.url else {
            throw CourierError(
                .invalidURL, "\(request.url.absoluteString) cannot be sent through the proxy \(server)",
                offendingInput: request.url.absoluteString)
        }
        forwarded.url = url
        if request.value(forHTTPHeaderField: "Host") == nil {
            try forwarded.setValue(origin, forHTTPHeaderField: "Host")
        }
        if let username = server.username {
            let credentials = Data("\(username):\(server.password ?? "")".utf8).base64EncodedString()
            try forwarded.setValue("Basic \(credentials)", forHTTPHeaderField: "Proxy-Authorization")
        }
        return forwarded
    }

    /// `host[:port]` for the `Host` field, the port only when it is not 80.
    static func originHost(of url: URL) -> String? {
        guard var host = url.host, !host.isEmpty else { return nil }
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        if let port = url.port, port != 80 { return "\(host):\(port)" }
        return host
    }
}

/// Writes each request head's target in absolute form, `http://` + its `Host` + the target:
/// what a forward proxy needs to know where a plain-HTTP request goes.
final class AbsoluteFormTarget: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .head(var head) = unwrapOutboundIn(data), head.uri.hasPrefix("/"),
            let host = head.headers.first(name: "host")
        else {
            context.write(data, promise: promise)
            return
        }
        head.uri = "http://" + host + head.uri
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }
}

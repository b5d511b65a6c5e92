import AsyncHTTPClient
import CourierCore
import Foundation
import NIOConcurrencyHelpers

/// The clients of an ``AsyncHTTPClientTransport`` that sends through proxies: one inner
/// transport per proxy server, made on the first request that needs it.
///
/// AsyncHTTPClient sets its proxy per client, for every request that client sends, and has no
/// way to send one request direct. A no-proxy list or a scheme without a proxy therefore needs
/// clients without one: the outer transport's own clients go direct, and each proxy server gets
/// a transport of its own (same configuration, its proxy set) so each keeps its own pool. Made
/// lazily, because most processes that read `https_proxy` from the environment only ever reach
/// a few hosts, and a configuration naming two servers costs nothing for the one not used.
final class ProxyRoutes: Sendable {
    /// The proxies and the no-proxy list.
    let proxies: ProxyConfiguration
    /// The transport configuration, which each proxied transport copies.
    private let base: AsyncHTTPClientTransport.Configuration
    /// Per route, its transport; nil once shut down.
    private let transports = NIOLockedValueBox<[Route: AsyncHTTPClientTransport]?>([:])

    /// A server, and whether plain HTTP is forwarded to it in absolute form or tunnelled.
    private struct Route: Hashable {
        var server: ProxyConfiguration.Server
        var absoluteForm: Bool
    }

    init(proxies: ProxyConfiguration, base: AsyncHTTPClientTransport.Configuration) {
        self.proxies = proxies
        var base = base
        base.proxy = nil
        self.base = base
    }

    /// Sends `request` through `server`: a plain-HTTP URL to an HTTP proxy in absolute form (see
    /// ``AbsoluteFormForwarding``), anything else through a tunnel the proxy opens.
    /// - Throws: the inner transport's `CourierError`, with proxy refusals as `.proxyFailed`
    ///   and every message naming the proxy without its password.
    func send(_ request: Request, context: ExchangeContext, through server: ProxyConfiguration.Server) async throws
        -> TransportResponse
    {
        let forwards = server.kind == .http && request.url.scheme?.lowercased() == "http"
        let transport = try transport(for: Route(server: server, absoluteForm: forwards), url: request.url)
        let forwarded = try forwards ? AbsoluteFormForwarding.request(request, to: server) : request
        do {
            var response = try await transport.send(forwarded, context: context)
            // Only the proxy answers 407 to a forwarded request: the same typed refusal as a
            // tunnel's, not a response.
            guard !forwards || response.head.statusCode != 407 else {
                throw Self.authenticationRefused(by: server, url: request.url, underlyingError: nil)
            }
            response.head.url = request.url
            return response
        } catch var error as CourierError where error.code != .proxyFailed {
            // Said of the URL the caller asked for, not of the proxy's address a forwarded
            // request went to.
            let sent = forwarded.url.absoluteString
            error.message = error.message.replacingOccurrences(of: sent, with: request.url.absoluteString)
            if error.offendingInput == sent { error.offendingInput = request.url.absoluteString }
            throw Self.proxyError(error, server: server, url: request.url)
        }
    }

    private func transport(for route: Route, url: URL) throws -> AsyncHTTPClientTransport {
        try transports.withLockedValue { transports in
            guard transports != nil else {
                throw CourierError(
                    .transportFailed, "the transport is shut down; cannot send \(url.absoluteString)",
                    offendingInput: url.absoluteString)
            }
            if let transport = transports?[route] { return transport }
            var configuration = base
            let server = route.server
            if route.absoluteForm {
                configuration.forwardsInAbsoluteForm = true
            } else if server.kind == .socks5 {
                configuration.clientProxy = .socksServer(host: server.host, port: server.port)
            } else {
                let authorization = server.username.map {
                    HTTPClient.Authorization.basic(username: $0, password: server.password ?? "")
                }
                configuration.clientProxy = .server(host: server.host, port: server.port, authorization: authorization)
            }
            let transport = AsyncHTTPClientTransport(configuration: configuration)
            transports?[route] = transport
            return transport
        }
    }

    /// Shuts every proxied transport down; later sends through a proxy fail.
    /// - Throws: the first inner transport's shutdown error.
    func shutdown() async throws {
        let made = transports.withLockedValue { transports in
            defer { transports = nil }
            return Array((transports ?? [:]).values)
        }
        var failure: (any Error)?
        for transport in made {
            do { try await transport.shutdown() } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }

    /// `.proxyFailed` for a 407 from `server`: it wants credentials, or refused the ones given.
    static func authenticationRefused(
        by server: ProxyConfiguration.Server, url: URL, underlyingError: (any Error)?
    ) -> CourierError {
        let target = url.absoluteString
        let why =
            server.username == nil
            ? "asks for credentials" : "refused the credentials given for \(server.username ?? "")"
        return CourierError(
            .proxyFailed, "the proxy \(server) \(why) (407 Proxy Authentication Required) on the way to \(target)",
            offendingInput: target, underlyingError: underlyingError)
    }

    /// The inner transport's error, told in terms of the proxy.
    static func proxyError(_ error: CourierError, server: ProxyConfiguration.Server, url: URL) -> CourierError {
        let target = url.absoluteString
        switch error.underlyingError as? HTTPClientError {
        case HTTPClientError.proxyAuthenticationRequired?:
            return authenticationRefused(by: server, url: url, underlyingError: error.underlyingError)
        case HTTPClientError.invalidProxyResponse?:
            return CourierError(
                .proxyFailed,
                "the proxy \(server) refused to open a tunnel to \(target) (CONNECT was not answered 2xx)",
                offendingInput: target, underlyingError: error.underlyingError)
        default:
            var error = error
            error.message += " (through the proxy \(server))"
            return error
        }
    }
}

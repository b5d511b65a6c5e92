import AsyncHTTPClient
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
    private let state = NIOLockedValueBox(State())

    private struct State {
        var transports: [ProxyConfiguration.Server: AsyncHTTPClientTransport] = [:]
        var isShutDown = false
    }

    init(proxies: ProxyConfiguration, base: AsyncHTTPClientTransport.Configuration) {
        self.proxies = proxies
        var base = base
        base.proxy = nil
        self.base = base
    }

    /// Sends `request` through `server`'s transport.
    /// - Throws: the inner transport's ``CourierError``, with proxy refusals as `.proxyFailed`
    ///   and every message naming the proxy without its password.
    func send(_ request: Request, context: ExchangeContext, through server: ProxyConfiguration.Server) async throws
        -> TransportResponse
    {
        let transport = try transport(for: server, url: request.url)
        do {
            return try await transport.send(request, context: context)
        } catch let error as CourierError {
            throw Self.proxyError(error, server: server, url: request.url)
        }
    }

    private func transport(for server: ProxyConfiguration.Server, url: URL) throws -> AsyncHTTPClientTransport {
        try state.withLockedValue { state in
            guard !state.isShutDown else {
                throw CourierError(
                    .transportFailed, "the transport is shut down; cannot send \(url.absoluteString)",
                    offendingInput: url.absoluteString)
            }
            if let transport = state.transports[server] { return transport }
            var configuration = base
            configuration.clientProxy = server.clientProxy
            let transport = AsyncHTTPClientTransport(configuration: configuration)
            state.transports[server] = transport
            return transport
        }
    }

    /// Shuts every proxied transport down; later sends through a proxy fail.
    /// - Throws: the first inner transport's shutdown error.
    func shutdown() async throws {
        let transports = state.withLockedValue { state in
            state.isShutDown = true
            return Array(state.transports.values)
        }
        var failure: (any Error)?
        for transport in transports {
            do { try await transport.shutdown() } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }

    /// The inner transport's error, told in terms of the proxy.
    static func proxyError(_ error: CourierError, server: ProxyConfiguration.Server, url: URL) -> CourierError {
        let target = url.absoluteString
        switch error.underlyingError as? HTTPClientError {
        case HTTPClientError.proxyAuthenticationRequired?:
            let why =
                server.username == nil
                ? "asks for credentials" : "refused the credentials given for \(server.username ?? "")"
            return CourierError(
                .proxyFailed,
                "the proxy \(server) \(why) (407 Proxy Authentication Required) on the way to \(target)",
                offendingInput: target, underlyingError: error.underlyingError)
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

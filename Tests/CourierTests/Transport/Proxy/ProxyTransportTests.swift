import Courier
import CourierTestServer
import Foundation
import NIOSSL
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

/// Requests through the test server's forward proxy: what went through it, what went direct,
/// the credentials it saw, and the errors when it refuses.
@Suite(.timeLimit(.minutes(3))) struct ProxyTransportTests {
    /// Sends a GET and reads the body; the status and the body's text.
    func get(_ url: URL, through transport: AsyncHTTPClientTransport) async throws -> (Int, String) {
        let response = try await transport.send(Request(url: url, timeoutInterval: 20), context: ExchangeContext())
        var body = Data()
        for try await chunk in response.body { body.append(contentsOf: chunk.readableBytesView) }
        return (response.head.statusCode, String(decoding: body, as: UTF8.self))
    }

    func transport(_ proxies: ProxyConfiguration, tls: TLSConfiguration? = nil) -> AsyncHTTPClientTransport {
        var configuration = AsyncHTTPClientTransport.Configuration()
        configuration.proxy = proxies
        configuration.tlsConfiguration = tls
        return AsyncHTTPClientTransport(configuration: configuration)
    }

    @Test func plainHTTPGoesThroughTheProxyWithItsCredentials() async throws {
        let server = try await TestServer.start()
        let proxy = try await TestForwardProxy.start(credentials: ("me", "hunter2"))
        let through = try ProxyConfiguration.Server(url: "http://me:hunter2@127.0.0.1:\(proxy.port)")
        let transport = transport(ProxyConfiguration(http: through))
        let result = await outcome { try await get(server.url("/get?via=proxy"), through: transport) }
        try await transport.shutdown()
        try await proxy.shutdown()
        try await server.shutdown()
        let (status, body) = try result.get()
        #expect(status == 200)
        #expect(body.contains("via"))
        // As curl -x sends it: to the proxy, the target in absolute form, no tunnel.
        let records = proxy.records
        #expect(records.map(\.method) == ["GET"])
        #expect(records.first?.target == "http://127.0.0.1:\(server.port)/get?via=proxy")
        let expected = "Basic " + Data("me:hunter2".utf8).base64EncodedString()
        #expect(records.first?.proxyAuthorization == expected)
        // The credentials are the proxy's: the origin never sees them.
        #expect(!body.lowercased().contains("proxy-authorization"))
    }

    @Test func noProxyHostsGoDirectAndTheRestThroughTheProxy() async throws {
        let server = try await TestServer.start()
        let proxy = try await TestForwardProxy.start()
        let through = ProxyConfiguration.Server(host: "127.0.0.1", port: proxy.port)
        let transport = transport(
            ProxyConfiguration(http: through, https: through, noProxy: NoProxyList("127.0.0.0/8")))
        let direct = await outcome { try await get(server.url("/get"), through: transport) }
        let named = try #require(URL(string: "http://localhost:\(server.port)/get"))
        let proxied = await outcome { try await get(named, through: transport) }
        try await transport.shutdown()
        try await proxy.shutdown()
        try await server.shutdown()
        #expect(try direct.get().0 == 200)
        #expect(try proxied.get().0 == 200)
        #expect(proxy.records.map(\.target) == ["http://localhost:\(server.port)/get"])
    }

    /// A proxy that tunnels only to port 443, as Squid does by default, still carries plain
    /// HTTP: that goes in absolute form, never through CONNECT, redirects and bodies included.
    @Test func plainHTTPNeedsNoTunnel() async throws {
        let first = try await TestServer.start()
        let second = try await TestServer.start()
        let proxy = try await TestForwardProxy.start()
        let transport = transport(ProxyConfiguration(http: .init(host: "127.0.0.1", port: proxy.port)))
        let manager = SessionManager(transport: transport)
        let result = await outcome {
            let redirected = try await manager.data(
                for: Request(url: first.url("/redirect-to?url=\(second.url("/get?hop=2").absoluteString)")))
            let posted = try await manager.data(
                for: Request(method: .post, url: second.url("/post"), body: .data(Data("x=1".utf8))))
            return (redirected, posted)
        }
        try await transport.shutdown()
        try await proxy.shutdown()
        try await first.shutdown()
        try await second.shutdown()
        let (redirected, posted) = try result.get()
        #expect(redirected.response.statusCode == 200)
        #expect(redirected.response.url.absoluteString == second.url("/get?hop=2").absoluteString)
        #expect(String(decoding: posted.data, as: UTF8.self).contains("x=1"))
        #expect(proxy.records.map(\.method) == ["GET", "GET", "POST"])
        #expect(!proxy.records.contains { $0.method == "CONNECT" })
    }

    @Test func httpsTunnelsThroughConnect() async throws {
        let certificates = try TestCertificates.shared.get()
        let identity = certificates.selfSigned
        let server = try await TestServer.start(
            tls: try NIOSSLContext(
                configuration: .makeServerConfiguration(
                    certificateChain: [.certificate(identity.certificate)], privateKey: .privateKey(identity.key))))
        let proxy = try await TestForwardProxy.start()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([identity.certificate])
        let transport = transport(
            ProxyConfiguration(https: .init(host: "127.0.0.1", port: proxy.port)), tls: tls)
        let result = await outcome { try await get(server.url("/get"), through: transport) }
        try await transport.shutdown()
        try await proxy.shutdown()
        try await server.shutdown()
        #expect(try result.get().0 == 200)
        #expect(proxy.records.map(\.method) == ["CONNECT"])
        #expect(proxy.records.first?.target == "127.0.0.1:\(server.port)")
    }

    @Test func refusedCredentialsAreAProxyErrorThatHidesThePassword() async throws {
        let server = try await TestServer.start()
        let proxy = try await TestForwardProxy.start(credentials: ("me", "right"))
        let through = try ProxyConfiguration.Server(url: "http://me:hunter2@127.0.0.1:\(proxy.port)")
        let transport = transport(ProxyConfiguration(http: through))
        let result = await outcome { try await get(server.url("/get"), through: transport) }
        try await transport.shutdown()
        try await proxy.shutdown()
        try await server.shutdown()
        let error = try #require(result.failure as? CourierError)
        #expect(error.code == .proxyFailed)
        #expect(error.message.contains("407"))
        #expect(error.message.contains("me:<redacted>@127.0.0.1:\(proxy.port)"))
        #expect(!"\(error)".contains("hunter2"))
        #expect(!error.message.contains("hunter2"))
        #expect(proxy.records.first?.proxyStatus == 407)
    }

    @Test func anUnreachableProxyNamesTheProxy() async throws {
        let server = try await TestServer.start()
        let transport = transport(
            ProxyConfiguration(http: try .init(url: "http://me:hunter2@127.0.0.1:9")))
        let result = await outcome { try await get(server.url("/get"), through: transport) }
        try await transport.shutdown()
        try await server.shutdown()
        let error = try #require(result.failure as? CourierError)
        #expect(error.code == .connectionFailed)
        #expect(error.message.contains("through the proxy http://me:<redacted>@127.0.0.1:9"))
        #expect(!error.message.contains("hunter2"))
    }

    @Test func aSessionSendsThroughTheProxyToo() async throws {
        let server = try await TestServer.start()
        let proxy = try await TestForwardProxy.start()
        let transport = transport(ProxyConfiguration(http: .init(host: "127.0.0.1", port: proxy.port)))
        let manager = SessionManager(transport: transport)
        let result = await outcome { try await manager.data(for: Request(url: server.url("/bytes/64"))) }
        try await manager.shutdown()
        try await transport.shutdown()
        try await proxy.shutdown()
        try await server.shutdown()
        #expect(try result.get().data.count == 64)
        #expect(proxy.records.count == 1)
    }
}

/// Runs `body`, keeping its error for assertions after the cleanup.
func outcome<Success: Sendable>(_ body: () async throws -> Success) async -> Result<Success, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}

extension Result where Failure == any Error {
    /// The error, if it failed.
    var failure: (any Error)? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

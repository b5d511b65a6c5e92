import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A forward proxy on loopback for tests: `CONNECT host:port` tunnels (what AsyncHTTPClient
/// sends for every proxied URL) and absolute-form requests (`GET http://host/path HTTP/1.1`,
/// what curl sends for plain HTTP), each recorded so a test can assert that a request went
/// through it and with which `Proxy-Authorization`.
///
/// It reaches loopback targets only (127.0.0.0/8, ::1, localhost) and answers 403 for any
/// other, so no test can reach the internet through it. An absolute-form request is forwarded
/// in origin form with `Connection: close` and without the proxy's own headers, one request per
/// connection, so each is recorded; a tunnel carries whatever follows, unseen.
///
/// ```swift
/// let proxy = try await TestForwardProxy.start(credentials: ("user", "secret"))
/// defer { Task { try await proxy.shutdown() } }
/// // … send through proxy.port …
/// #expect(proxy.records.map(\.target) == ["127.0.0.1:\(server.port)"])
/// ```
package final class TestForwardProxy: Sendable {
    /// One request the proxy received (its head only).
    package struct Record: Sendable, Hashable {
        /// `CONNECT`, `GET`, …
        package var method: String
        /// The request target as sent: `host:port` for CONNECT, an absolute URL otherwise.
        package var target: String
        /// The `Proxy-Authorization` value, if any.
        package var proxyAuthorization: String?
        /// Every header field as sent, in order.
        package var headers: [[String]]
        /// The status the proxy answered with itself (200 for an opened tunnel, 407, 403, 502),
        /// or nil when it forwarded the request and the origin answered.
        package var proxyStatus: Int?
    }

    /// The address the proxy listens on.
    package let host: String
    /// The bound port.
    package let port: Int
    private let serverChannel: any Channel
    private let log: ProxyLog

    private init(host: String, port: Int, serverChannel: any Channel, log: ProxyLog) {
        self.host = host
        self.port = port
        self.serverChannel = serverChannel
        self.log = log
    }

    /// Binds and starts proxying.
    /// - Parameters:
    ///   - host: the loopback address to bind.
    ///   - credentials: when given, requests without `Proxy-Authorization: Basic` for exactly
    ///     these are answered `407` with `Proxy-Authenticate`.
    /// - Throws: NIO's error when the address cannot be bound.
    package static func start(host: String = "127.0.0.1", credentials: (user: String, password: String)? = nil)
        async throws -> TestForwardProxy
    {
        let expected = credentials.map { "Basic " + Data("\($0.user):\($0.password)".utf8).base64EncodedString() }
        let log = ProxyLog(expectedAuthorization: expected)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    log.opened(channel)
                    try channel.pipeline.syncOperations.addHandler(ProxyFrontHandler(log: log))
                }
            }
            .bind(host: host, port: 0)
            .get()
        return TestForwardProxy(host: host, port: channel.localAddress?.port ?? 0, serverChannel: channel, log: log)
    }

    /// `http://127.0.0.1:PORT`, as a proxy URL.
    package var url: String {
        host.contains(":") ? "http://[\(host)]:\(port)" : "http://\(host):\(port)"
    }

    /// What the proxy has received so far, oldest first.
    package var records: [Record] { log.records }

    /// Stops listening and closes every connection, tunnels included.
    package func shutdown() async throws {
        try? await serverChannel.close()
        for channel in log.closeAll() {
            try? await channel.close()
        }
    }
}

/// The proxy's shared state: the records and the open channels (to close on shutdown).
final class ProxyLog: Sendable {
    let expectedAuthorization: String?
    private let state = NIOLockedValueBox((records: [TestForwardProxy.Record](), channels: [any Channel]()))

    init(expectedAuthorization: String?) {
        self.expectedAuthorization = expectedAuthorization
    }

    var records: [TestForwardProxy.Record] { state.withLockedValue { $0.records } }

    func record(_ record: TestForwardProxy.Record) {
        state.withLockedValue { $0.records.append(record) }
    }

    func opened(_ channel: any Channel) {
        state.withLockedValue { $0.channels.append(channel) }
    }

    func closeAll() -> [any Channel] {
        state.withLockedValue { state in
            defer { state.channels.removeAll() }
            return state.channels
        }
    }
}

import NIOCore
import NIOSSL

/// How a TLS ``TestServer`` speaks HTTP/2, as nginx 1.22 does with `listen … ssl http2`.
///
/// Pass it to ``TestServer/start(host:port:tls:http2:logRequests:eventLoopGroup:)`` together with
/// a TLS context that offers ALPN `h2` (``TestServer/makeTLSContext(certificateChain:privateKey:)``
/// makes one). Clients that offer `h2` get HTTP/2; the others get the same HTTP/1.1 server as
/// without this option.
///
/// ```swift
/// let tls = try TestServer.makeTLSContext(certificateChain: [certificate], privateKey: key)
/// let server = try await TestServer.start(tls: tls, http2: HTTP2Options(streamsPerConnection: 50))
/// ```
public struct HTTP2Options: Sendable, Hashable {
    /// Retires each connection after this many streams, as nginx's `keepalive_requests` does:
    /// once the Nth request head is in, the server sends GOAWAY(NO_ERROR) whose last-stream-id
    /// is that stream's, finishes the streams at or below it, then closes the connection.
    /// Streams the client opened above it are never processed. `nil` (the default) never
    /// retires a connection; values below 1 count as 1.
    public var streamsPerConnection: Int?
    /// SETTINGS_MAX_CONCURRENT_STREAMS the server announces (nginx's default is 128).
    public var maxConcurrentStreams: Int
    /// The flow-control window the server grants each request body
    /// (SETTINGS_INITIAL_WINDOW_SIZE, 1 to 2^31-1; 65,535 by default, as in RFC 9113).
    public var initialWindowSize: Int
    /// Speaks HTTP/2 on every connection, whatever ALPN chose, as gRPC servers and Apple's push
    /// service do: a client that offered only `http/1.1` gets the HTTP/2 connection preface
    /// (a SETTINGS frame) in answer to its request. Pair it with a TLS context that offers `h2`
    /// alone (``TestServer/makeTLSContext(certificateChain:privateKey:http2Only:)``). Off by default.
    public var onlyHTTP2: Bool

    /// Options for HTTP/2; see the properties.
    public init(
        streamsPerConnection: Int? = nil, maxConcurrentStreams: Int = 128, initialWindowSize: Int = 65_535,
        onlyHTTP2: Bool = false
    ) {
        self.streamsPerConnection = streamsPerConnection
        self.maxConcurrentStreams = maxConcurrentStreams
        self.initialWindowSize = initialWindowSize
        self.onlyHTTP2 = onlyHTTP2
    }

    /// ``streamsPerConnection`` made valid.
    var streamLimit: Int? { streamsPerConnection.map { max(1, $0) } }
    /// ``maxConcurrentStreams`` made valid.
    var concurrentStreams: Int { min(max(1, maxConcurrentStreams), Int(Int32.max)) }
    /// ``initialWindowSize`` made valid.
    var streamWindow: Int { min(max(1, initialWindowSize), Int(Int32.max)) }
}

/// The ALPN names a TLS context must offer for the server to speak HTTP/2 to clients that ask.
package enum HTTP2ALPN {
    /// `["h2", "http/1.1"]`: HTTP/2 preferred, HTTP/1.1 for clients that do not offer it.
    package static let protocols = ["h2", "http/1.1"]
    /// `["h2"]`: what a server that speaks only HTTP/2 offers.
    package static let http2Only = ["h2"]
}

/// Why ``TestServer`` refused a configuration.
package struct TestServerConfigurationError: Error, CustomStringConvertible, Sendable {
    /// What was wrong.
    package let description: String
}

extension TestServer {
    /// A server TLS context offering ALPN `h2` and `http/1.1` (TLS 1.2 or later), or `h2` alone
    /// with `http2Only`, for `start(tls:http2:)`.
    ///
    /// - Throws: swift-nio-ssl's error when the key does not fit the certificate or the
    ///   context cannot be made.
    public static func makeTLSContext(
        certificateChain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey, http2Only: Bool = false
    ) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: certificateChain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = .tlsv12
        configuration.applicationProtocols = http2Only ? HTTP2ALPN.http2Only : HTTP2ALPN.protocols
        return try NIOSSLContext(configuration: configuration)
    }
}

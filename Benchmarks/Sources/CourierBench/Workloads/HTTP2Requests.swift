import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// The HTTP/2 rows (issue 20): many small requests over TLS to the test server in its HTTP/2
/// mode, which offers `h2` and `http/1.1` by ALPN. Courier sends every request with a body over
/// HTTP/1.1 there (AsyncHTTPClient 1.37 traps when an HTTP/2 server answers an upload early and
/// resets the stream), so its POSTs are measured against raw AsyncHTTPClient on HTTP/2 (the peer)
/// and on HTTP/1.1 (the reference); its GETs still ride HTTP/2, against the same peer.
///
/// Options: `--url https://127.0.0.1:PORT`, `--ca PEM` (the server's self-signed certificate,
/// the only root trusted), `--requests` (5,000), `--concurrency` (16), `--connections` (HTTP/1.1
/// connections per host, 8: Courier's default `maximumConnectionsPerHost`), `--size` (the POST
/// body, 1,024 bytes), `--path` (`/post` or `/get`; `/delay/0.02` makes the server take 20 ms
/// over each answer, as a remote server's round trip would). Each side checks every response (a 200, and for POSTs the body echoed
/// back); the raw sides also check the HTTP version of every response. The driver checks on the
/// server's counters which protocol carried the requests (see `HTTP2Host`).
enum HTTP2Requests {
    enum Kind: Sendable {
        case posts, gets
    }

    struct Setup: Sendable {
        let baseURL: String
        let path: String
        let certificates: [NIOSSLCertificate]
        let requestCount: Int
        let concurrency: Int
        let connections: Int
        let payload: Data

        init(options: Options, kind: Kind) throws {
            baseURL = try options.string("url")
            path = options.string("path", default: kind == .posts ? "/post" : "/get")
            certificates = try NIOSSLCertificate.fromPEMFile(try options.string("ca"))
            requestCount = try options.int("requests", default: 5_000)
            concurrency = try options.int("concurrency", default: 16)
            connections = try options.int("connections", default: 8)
            payload = Self.payload(size: try options.int("size", default: 1_024))
        }

        /// Lower-case letters from a fixed xorshift sequence: echoed unescaped in the server's
        /// JSON, and with no repeats for a substring search to trip on.
        static func payload(size: Int) -> Data {
            var state: UInt64 = 0x2545_F491_4F6C_DD1D
            return Data(
                (0..<max(1, size)).map { _ in
                    state ^= state << 13
                    state ^= state >> 7
                    state ^= state << 17
                    return UInt8(ascii: "a") + UInt8(state % 26)
                })
        }

        /// Whether `body` is the server's answer to one request of `kind`: for a POST, the
        /// JSON document that echoes the payload; for a GET, any non-empty document.
        func isAnswer(_ body: Data, kind: Kind) -> Bool {
            switch kind {
            case .posts: return body.count > payload.count && body.range(of: payload) != nil
            case .gets: return !body.isEmpty
            }
        }

        /// Requests sent in all, the warm-up included (see `SmallRequests.measure`).
        var requestsSent: Int { requestCount + concurrency * 4 }
    }

    /// Courier's side: `SessionManager` on its default transport, trusting only the server's
    /// certificate; `allowsHTTP2: false` is the diagnostic side that keeps every request on HTTP/1.1.
    static func courier(options: Options, kind: Kind, allowsHTTP2: Bool = true) async throws -> Measurement {
        let setup = try Setup(options: options, kind: kind)
        var configuration = AsyncHTTPClientTransport.Configuration()
        configuration.maximumConnectionsPerHost = setup.connections
        configuration.allowsHTTP2 = allowsHTTP2
        try configuration.apply(ServerTrustPolicy.pinning(.certificate, to: setup.certificates))
        let transport = AsyncHTTPClientTransport(configuration: configuration)
        let manager = SessionManager(transport: transport)
        do {
            var request: Request
            switch kind {
            case .posts:
                request = Request(
                    method: .post, url: try CourierSession.url(setup.baseURL + setup.path), body: .data(setup.payload))
                try request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
            case .gets:
                request = Request(url: try CourierSession.url(setup.baseURL + setup.path))
            }
            let finalRequest = request
            @Sendable func once() async throws -> Int {
                let response = try await manager.data(for: finalRequest)
                guard response.response.statusCode == 200, setup.isAnswer(response.data, kind: kind) else { return -1 }
                return response.data.count
            }
            var measurement = try await SmallRequests.measure(
                count: setup.requestCount, concurrency: setup.concurrency, once)
            measurement.extra["requests_sent"] = String(setup.requestsSent)
            try await manager.shutdown()
            try await transport.shutdown()
            return measurement
        } catch {
            try? await manager.shutdown()
            try? await transport.shutdown()
            throw error
        }
    }

    /// A diagnostic side: raw AsyncHTTPClient's delegate API (`execute(request:delegate:)`,
    /// `.indifferent`, no deadline), the API Courier's transport uses for these requests, with
    /// a delegate that only collects the body; on HTTP/2 unless `http1Only`.
    static func rawDelegate(options: Options, kind: Kind, http1Only: Bool) async throws -> Measurement {
        let setup = try Setup(options: options, kind: kind)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(setup.certificates)
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: setup.connections)
        configuration.httpVersion = http1Only ? .http1Only : .automatic
        let expected: HTTPVersion = http1Only ? .http1_1 : .http2
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let url = setup.baseURL + setup.path
            let body = ByteBuffer(bytes: setup.payload)
            @Sendable func once() async throws -> Int {
                var request = try HTTPClient.Request(url: url, method: kind == .posts ? .POST : .GET)
                request.headers.add(name: "Accept-Encoding", value: SmallRequests.acceptEncoding)
                if kind == .posts {
                    request.headers.add(name: "Content-Type", value: "text/plain")
                    request.body = .byteBuffer(body)
                }
                let task = client.execute(
                    request: request, delegate: CollectingDelegate(), eventLoop: .indifferent, deadline: nil)
                let answer = try await task.futureResult.get()
                guard answer.status == .ok, answer.version == expected, setup.isAnswer(answer.body, kind: kind) else {
                    return -1
                }
                return answer.body.count
            }
            var measurement = try await SmallRequests.measure(
                count: setup.requestCount, concurrency: setup.concurrency, once)
            measurement.detail += " in \(expected), delegate API"
            measurement.extra["requests_sent"] = String(setup.requestsSent)
            try await client.shutdown()
            return measurement
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// The raw sides: AsyncHTTPClient's async API with nothing on top, `.automatic` (HTTP/2
    /// by ALPN) or `.http1Only`; every response must come in the version asked for.
    static func raw(options: Options, kind: Kind, http1Only: Bool) async throws -> Measurement {
        let setup = try Setup(options: options, kind: kind)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(setup.certificates)
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: setup.connections)
        configuration.httpVersion = http1Only ? .http1Only : .automatic
        let expected: HTTPVersion = http1Only ? .http1_1 : .http2
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let url = setup.baseURL + setup.path
            let body = ByteBuffer(bytes: setup.payload)
            @Sendable func once() async throws -> Int {
                var request = HTTPClientRequest(url: url)
                request.headers.add(name: "Accept-Encoding", value: SmallRequests.acceptEncoding)
                if kind == .posts {
                    request.method = .POST
                    request.headers.add(name: "Content-Type", value: "text/plain")
                    request.body = .bytes(body)
                }
                let response = try await client.execute(request, timeout: .seconds(30))
                let received = Data(try await response.body.collect(upTo: 1 << 20).readableBytesView)
                guard response.status == .ok, response.version == expected, setup.isAnswer(received, kind: kind) else {
                    return -1
                }
                return received.count
            }
            var measurement = try await SmallRequests.measure(
                count: setup.requestCount, concurrency: setup.concurrency, once)
            measurement.detail += " in \(expected)"
            measurement.extra["requests_sent"] = String(setup.requestsSent)
            try await client.shutdown()
            return measurement
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}

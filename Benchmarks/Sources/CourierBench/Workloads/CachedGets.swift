import Courier
import Foundation
import NIOCore

/// The HTTP cache row (issue 18): GETs of the test server's `/cache/600` (`Cache-Control:
/// public, max-age=600`) through a `SessionManager`.
///
/// - `courier`: the manager has an `HTTPCache`; the warm-up stores the response, so every timed
///   GET is a fresh hit that never reaches the network.
/// - `network`: the same manager setup without a cache: every GET goes to the server.
/// - `memory-transport`: the ceiling for a cached GET, the session over a transport that answers
///   at once from memory with the same bytes (no cache and no network).
///
/// Each GET checks status 200 and the body's length against the first response's.
enum CachedGets {
    enum Side: Sendable {
        case cached, network, memoryTransport
    }

    static func run(options: Options, side: Side) async throws -> Measurement {
        let base = try options.string("url")
        let defaultCount = side == .network ? 10_000 : 100_000
        let requestCount = try options.int("requests", default: defaultCount)
        let concurrency = try options.int("concurrency", default: 16)
        let url = try CourierSession.url(base + "/cache/600")
        var transportConfiguration = AsyncHTTPClientTransport.Configuration()
        transportConfiguration.maximumConnectionsPerHost = concurrency
        let network = AsyncHTTPClientTransport(configuration: transportConfiguration)
        var configuration = SessionManager.Configuration()
        configuration.cookieStorage = nil
        if side == .cached { configuration.cache = HTTPCache() }
        var transport: any Transport = network
        if side == .memoryTransport {
            let sample = try await network.send(Request(url: url), context: ExchangeContext())
            var body = ByteBuffer()
            for try await chunk in sample.body {
                var chunk = chunk
                body.writeBuffer(&chunk)
            }
            transport = InstantTransport(head: sample.head, body: body)
        }
        let manager = SessionManager(configuration: configuration, transport: transport)
        do {
            let expected = try await manager.data(for: Request(url: url)).data.count
            let request = Request(url: url)
            let measurement = try await SmallRequests.measure(count: requestCount, concurrency: concurrency) {
                let response = try await manager.data(for: request)
                return response.response.statusCode == 200 && response.data.count == expected ? expected : -1
            }
            try await manager.shutdown()
            try await network.shutdown()
            return measurement
        } catch {
            try? await manager.shutdown()
            try? await network.shutdown()
            throw error
        }
    }
}

/// Answers every request at once with one stored head and body.
struct InstantTransport: Transport {
    let head: ResponseHead
    let body: ByteBuffer

    func send(_ request: Request, context: ExchangeContext) async throws -> TransportResponse {
        let body = self.body
        return TransportResponse(
            head: head,
            body: BodyChunks(makeNext: {
                var pending: ByteBuffer? = body
                return {
                    defer { pending = nil }
                    return pending
                }
            }))
    }

    func shutdown() async throws {}
}

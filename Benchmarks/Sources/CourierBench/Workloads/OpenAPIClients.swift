import AsyncHTTPClient
import BenchOpenAPIClient
import Courier
import CourierOpenAPI
import Foundation
import NIOCore
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime

/// The openapi-* rows: the OpenAPI example's generated client (Examples/OpenAPI) on
/// CourierClientTransport and on swift-openapi-async-http-client's transport, and raw
/// AsyncHTTPClient doing the same exchanges without OpenAPI as the machine's ceiling.
enum OpenAPIClients {
    enum Side: Sendable {
        case courier
        case peer
    }

    /// A transport for `side` with `concurrency` connections per host; shut down by `finish`.
    static func transport(_ side: Side, concurrency: Int) -> (any ClientTransport, @Sendable () async throws -> Void) {
        switch side {
        case .courier:
            var configuration = Courier.AsyncHTTPClientTransport.Configuration()
            configuration.maximumConnectionsPerHost = concurrency
            let transport = Courier.AsyncHTTPClientTransport(configuration: configuration)
            let manager = SessionManager(transport: transport)
            return (CourierClientTransport(manager: manager), { try await transport.shutdown() })
        case .peer:
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool = .init(
                idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            let transport = OpenAPIAsyncHTTPClient.AsyncHTTPClientTransport(configuration: .init(client: client))
            return (transport, { try await client.shutdown() })
        }
    }

    /// Many `getEcho` calls (GET /get, a JSON echo decoded by the generated code), concurrency 16.
    static func gets(options: Options, side: Side) async throws -> Measurement {
        let serverURL = try CourierSession.url(try options.string("url"))
        let requestCount = try options.int("requests", default: 10_000)
        let concurrency = try options.int("concurrency", default: 16)
        let (transport, finish) = transport(side, concurrency: concurrency)
        do {
            let call = ExampleTour.getEchoCaller(over: transport, serverURL: serverURL)
            let measurement = try await SmallRequests.measure(count: requestCount, concurrency: concurrency, call)
            try await finish()
            return measurement
        } catch {
            try? await finish()
            throw error
        }
    }

    /// One streamed upload of `bytes` (default 1 GiB) through the generated `upload` operation: a
    /// `.single` body of known length produced `chunk` bytes (default 64 KiB) at a time, never held whole. Correct when
    /// the server counted every byte and its SHA-256 matches the pattern's.
    static func upload(options: Options, side: Side) async throws -> Measurement {
        let serverURL = try CourierSession.url(try options.string("url"))
        let size = try options.int("bytes", default: 1 << 30)
        let chunkSize = try options.int("chunk", default: 64 << 10)
        let (transport, finish) = transport(side, concurrency: 1)
        do {
            let body = ExampleTour.generatedBody(count: size, chunkSize: chunkSize, iterationBehavior: .single)
            let (elapsed, report) = try await measureAsync {
                try await ExampleTour.upload(body, over: transport, serverURL: serverURL)
            }
            try await finish()
            let expected = try await patternDigest(count: size)
            return Measurement(
                seconds: elapsed, operations: 1, bytes: size,
                correct: report.bytes == Int64(size) && report.sha256 == expected,
                detail: "server received \(report.bytes) bytes, sha256 \(report.sha256 ?? "none")")
        } catch {
            try? await finish()
            throw error
        }
    }

    /// The ceiling of the upload row: raw AsyncHTTPClient streaming the same bytes in the same
    /// chunks to the same /upload, without OpenAPI or Courier.
    static func rawUpload(options: Options) async throws -> Measurement {
        let url = try options.string("url") + "/upload"
        let size = try options.int("bytes", default: 1 << 30)
        let chunkSize = try options.int("chunk", default: 64 << 10)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let chunks = ExampleTour.generatedBody(count: size, chunkSize: chunkSize, iterationBehavior: .single)
                .map { ByteBuffer(bytes: $0) }
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/octet-stream")
            request.body = .stream(chunks, length: .known(Int64(size)))
            let (elapsed, received) = try await measureAsync {
                let response = try await client.execute(request, timeout: .minutes(10))
                return try await response.body.collect(upTo: 1 << 20)
            }
            try await client.shutdown()
            let document = try JSONSerialization.jsonObject(with: Data(received.readableBytesView)) as? [String: Any]
            let expected = try await patternDigest(count: size)
            let bytes = (document?["bytes"] as? Int) ?? -1
            let digest = document?["sha256"] as? String
            return Measurement(
                seconds: elapsed, operations: 1, bytes: size, correct: bytes == size && digest == expected,
                detail: "server received \(bytes) bytes, sha256 \(digest ?? "none")")
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// The SHA-256 of the example's pattern, in lowercase hex (computed after the timed section).
    static func patternDigest(count: Int) async throws -> String {
        var digest = StreamingDigest()
        for try await chunk in ExampleTour.generatedBody(count: count, chunkSize: 1 << 20) {
            chunk.withUnsafeBytes { digest.update($0) }
        }
        return digest.finalize()
    }
}

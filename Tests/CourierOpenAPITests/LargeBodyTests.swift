import Courier
import CourierDigest
import CourierOpenAPI
import CourierOpenAPIExample
import CourierTestServer
import Foundation
import OpenAPIRuntime
import Testing

/// Big bodies both ways through the generated client, checked by byte count and SHA-256.
@Suite("CourierOpenAPI: large bodies stream both ways", .timeLimit(.minutes(3)))
struct LargeBodyTests {
    static let size = 256 << 20

    /// The SHA-256 of the example's generated pattern, computed a mebibyte at a time.
    static func patternDigest(count: Int) async throws -> String {
        var hasher = SHA256()
        for try await chunk in ExampleTour.generatedBody(count: count, chunkSize: 1 << 20) {
            hasher.update(data: chunk)
        }
        return hasher.finalize().hexString
    }

    @Test("a 256 MiB upload of known length, and one chunked, arrive whole", arguments: [true, false])
    func largeUpload(knownLength: Bool) async throws {
        try await withServer { server in
            let body = ExampleTour.generatedBody(
                count: Self.size, chunkSize: 256 << 10, iterationBehavior: .single,
                length: knownLength ? nil : .unknown)
            let report = try await ExampleTour.upload(
                body, over: ExampleTour.courierTransport(), serverURL: server.baseURL)
            #expect(report.bytes == Int64(Self.size))
            #expect(report.sha256 == (try await Self.patternDigest(count: Self.size)))
            #expect(report.contentLength == (knownLength ? String(Self.size) : nil))
        }
    }

    @Test("a 256 MiB download streams through a session that buffers at most 1 MiB, and hashes right")
    func largeDownload() async throws {
        try await withServer { server in
            var configuration = SessionManager.Configuration()
            // A data task would fail past this; the transport streams, so it never applies.
            configuration.maximumBufferedResponseSize = 1 << 20
            let transport = ExampleTour.courierTransport(manager: SessionManager(configuration: configuration))
            var hasher = SHA256()
            var received = 0
            var largestChunk = 0
            let length = try await ExampleTour.download(
                count: Int64(Self.size), seed: 5, over: transport, serverURL: server.baseURL
            ) { chunk in
                hasher.update(data: chunk)
                received += chunk.count
                largestChunk = max(largestChunk, chunk.count)
            }
            #expect(length == .known(Int64(Self.size)))
            #expect(received == Self.size)
            #expect(largestChunk <= 4 << 20)

            var expected = SHA256()
            let step = 4 << 20
            for offset in stride(from: 0, to: Self.size, by: step) {
                expected.update(data: TestServer.expectedBytes(count: step, seed: 5, offset: offset))
            }
            #expect(hasher.finalize() == expected.finalize())
        }
    }
}

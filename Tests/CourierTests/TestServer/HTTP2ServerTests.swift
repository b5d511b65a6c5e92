import AsyncHTTPClient
import CourierTestServer
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import Testing

/// The test server's HTTP/2 mode, checked with clients that are not Courier: curl and
/// AsyncHTTPClient directly.
@Suite("Test server: HTTP/2", .timeLimit(.minutes(3)))
struct HTTP2ServerTests {
    typealias Harness = HTTP2TestHarness

    // MARK: - Negotiation and endpoints

    @Test(.enabled(if: HTTP2TestHarness.curlSpeaksHTTP2, "curl has no HTTP/2"))
    func alpnPicksH2AndStillServesHTTP1() async throws {
        try await Harness.withServer { context in
            let h2 = try await Harness.curlHTTP2(context, "/get?a=1", ["--write-out", "\n%{http_version}"])
            #expect(h2.exitCode == 0, "\(h2.stderr)")
            #expect(h2.stdout.hasSuffix("\n2"))
            #expect(context.server.stats.http2ConnectionsOpened == 1)
            #expect(context.server.stats.lastRequestHead?.version == "HTTP/2.0")
            #expect(context.server.stats.lastRequestHead?.value("host") == "127.0.0.1:\(context.server.port)")

            let h1 = try await Harness.curl(
                [
                    "--http1.1", "--cacert", context.certificateFile.path, "--write-out", "\n%{http_version}",
                    context.server.url("/get?a=1").absoluteString,
                ])
            #expect(h1.exitCode == 0, "\(h1.stderr)")
            #expect(h1.stdout.hasSuffix("\n1.1"))
            #expect(context.server.stats.http2ConnectionsOpened == 1)
            #expect(context.server.stats.connectionsAccepted == 2)
            #expect(context.server.stats.lastRequestHead?.version == "HTTP/1.1")
        }
    }

    @Test func getPostAndDownloadOverH2() async throws {
        try await Harness.withServer { context in
            let client = Harness.makeClient(trusting: context.certificate)
            do {
                let get = try await Harness.fetch(client, context, "/get?q=swift")
                #expect(get.version == .http2)
                #expect(try get.json()["args"] == ["q": "swift"])
                #expect(try get.json()["url"]?.stringValue == context.server.url("/get?q=swift").absoluteString)

                let body = Array("hello over h2".utf8)
                let post = try await Harness.fetch(client, context, "/post", method: .POST, body: body)
                #expect(post.status == .ok)
                #expect(try post.json()["data"]?.stringValue == "hello over h2")

                let download = try await Harness.fetch(client, context, "/bytes/1000000?seed=3")
                #expect(download.headers.first(name: "content-length") == "1000000")
                #expect(Array(download.body.readableBytesView) == TestServer.expectedBytes(count: 1_000_000, seed: 3))

                let streamed = try await Harness.fetch(client, context, "/stream-bytes/300000?seed=4&chunk_size=7000")
                #expect(Array(streamed.body.readableBytesView) == TestServer.expectedBytes(count: 300_000, seed: 4))

                let status = try await Harness.fetch(client, context, "/status/418")
                #expect(status.status.code == 418)
                let redirect = try await Harness.fetch(client, context, "/redirect/2")
                #expect(redirect.status == .found)
                #expect(redirect.headers.first(name: "location") == "/relative-redirect/1")
                let drip = try await Harness.fetch(client, context, "/drip?numbytes=5&duration=0.05")
                #expect(drip.text == "*****")
                let delayed = try await Harness.fetch(client, context, "/delay/0.05")
                #expect(delayed.status == .ok)

                let head = try await Harness.fetch(client, context, "/bytes/1000", method: .HEAD)
                #expect(head.headers.first(name: "content-length") == "1000")
                #expect(head.body.readableBytes == 0)

                let stats = context.server.stats
                #expect(stats.connectionsAccepted == 1)
                #expect(stats.http2ConnectionsOpened == 1)
                #expect(stats.http2StreamsServed == 9)
                #expect(stats.requestsServed == 9)
                #expect(stats.http2StreamsReset == 0)
            } catch {
                try await client.shutdown()
                throw error
            }
            try await client.shutdown()
        }
    }

    @Test(.enabled(if: HTTP2TestHarness.curlSpeaksHTTP2, "curl has no HTTP/2"))
    func uploadOfAFileOverH2() async throws {
        try await Harness.withServer { context in
            let file = context.directory.appendingPathComponent("upload.bin")
            let bytes = TestServer.expectedBytes(count: 3_000_000, seed: 9)
            try Data(bytes).write(to: file)
            let result = try await Harness.curlHTTP2(
                context, "/upload", ["--data-binary", "@\(file.path)", "-H", "Content-Type: application/octet-stream"])
            #expect(result.exitCode == 0, "\(result.stderr)")
            let document = try #require(TestServerJSON.parse(Array(result.stdout.utf8)))
            #expect(document["bytes"]?.intValue == 3_000_000)
            #expect(document["sha256"]?.stringValue == sha256Hex(bytes))
            #expect(context.server.stats.http2StreamsReset == 0)
        }
    }

    @Test func hundredConcurrentRequestsShareOneConnection() async throws {
        try await Harness.withServer { context in
            let client = Harness.makeClient(trusting: context.certificate)
            do {
                // One request first, so the client knows the connection speaks h2 before the burst.
                _ = try await Harness.fetch(client, context, "/get")
                let replies = try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<100 {
                        group.addTask {
                            let reply = try await Harness.fetch(client, context, "/anything/\(index)")
                            return reply.status == .ok && reply.version == .http2 ? 1 : 0
                        }
                    }
                    return try await group.reduce(0, +)
                }
                #expect(replies == 100)
                let stats = context.server.stats
                #expect(stats.connectionsAccepted == 1)
                #expect(stats.http2ConnectionsOpened == 1)
                #expect(stats.http2StreamsServed == 101)
            } catch {
                try await client.shutdown()
                throw error
            }
            try await client.shutdown()
        }
    }

    @Test func http2WithoutTLSIsRefused() async throws {
        await #expect(throws: TestServerConfigurationError.self) {
            _ = try await TestServer.start(http2: HTTP2Options())
        }
    }
}

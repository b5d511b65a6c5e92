import AsyncHTTPClient
import CourierTestServer
import NIOCore
import NIOHTTP1
import Testing

@Suite("Test server: generated downloads", .timeLimit(.minutes(3)))
struct DownloadEndpointTests {
    @Test func bytesAreDeterministicPerSeed() async throws {
        try await TestServerHarness.withServer { server async throws in
            let reply = try await TestServerHarness.fetch(server, "/bytes/200000?seed=42")
            #expect(reply.status == .ok)
            #expect(reply.headers.first(name: "Content-Length") == "200000")
            #expect(reply.headers.first(name: "Content-Type") == "application/octet-stream")
            #expect(reply.bytes == TestServer.expectedBytes(count: 200_000, seed: 42))
            let other = try await TestServerHarness.fetch(server, "/bytes/64?seed=43")
            #expect(other.bytes != Array(reply.bytes.prefix(64)))
            #expect(try await TestServerHarness.fetch(server, "/bytes/0").body.readableBytes == 0)
            #expect(try await TestServerHarness.fetch(server, "/bytes/-1").status == .badRequest)
            #expect(try await TestServerHarness.fetch(server, "/bytes/10?seed=x").status == .badRequest)
        }
    }

    @Test func streamBytesAreChunkedAndMatchBytes() async throws {
        try await TestServerHarness.withServer { server async throws in
            let reply = try await TestServerHarness.fetch(server, "/stream-bytes/100000?seed=7&chunk_size=1000")
            #expect(reply.headers.first(name: "Transfer-Encoding") == "chunked")
            #expect(reply.headers.first(name: "Content-Length") == nil)
            #expect(reply.bytes == TestServer.expectedBytes(count: 100_000, seed: 7))
        }
    }

    @Test func rangeServesFullAndPartialContent() async throws {
        try await TestServerHarness.withServer { server async throws in
            let full = try await TestServerHarness.fetch(server, "/range/100")
            #expect(full.status == .ok)
            #expect(full.text.hasPrefix("abcdefghijklmnopqrstuvwxyzabcd"))
            #expect(full.bytes == TestServer.expectedRangeBytes(count: 100))
            #expect(full.headers.first(name: "ETag") == "\"range100\"")
            #expect(full.headers.first(name: "Accept-Ranges") == "bytes")

            let middle = try await TestServerHarness.fetch(server, "/range/100", headers: [("Range", "bytes=10-19")])
            #expect(middle.status == .partialContent)
            #expect(middle.headers.first(name: "Content-Range") == "bytes 10-19/100")
            #expect(middle.text == "klmnopqrst")

            let open = try await TestServerHarness.fetch(server, "/range/100", headers: [("Range", "bytes=95-")])
            #expect(open.text == "rstuv")
            let suffix = try await TestServerHarness.fetch(server, "/range/100", headers: [("Range", "bytes=-3")])
            #expect(suffix.headers.first(name: "Content-Range") == "bytes 97-99/100")
            #expect(suffix.text == "tuv")
            let clipped = try await TestServerHarness.fetch(server, "/range/100", headers: [("Range", "bytes=98-500")])
            #expect(clipped.headers.first(name: "Content-Range") == "bytes 98-99/100")

            let outside = try await TestServerHarness.fetch(server, "/range/100", headers: [("Range", "bytes=100-")])
            #expect(outside.status == .rangeNotSatisfiable)
            #expect(outside.headers.first(name: "Content-Range") == "bytes */100")
        }
    }

    @Test func ifRangeDecidesBetweenPartialAndFull() async throws {
        try await TestServerHarness.withServer { server async throws in
            let matching = try await TestServerHarness.fetch(
                server, "/range/50", headers: [("Range", "bytes=40-"), ("If-Range", "\"range50\"")])
            #expect(matching.status == .partialContent)
            #expect(matching.body.readableBytes == 10)
            let stale = try await TestServerHarness.fetch(
                server, "/range/50", headers: [("Range", "bytes=40-"), ("If-Range", "\"other\"")])
            #expect(stale.status == .ok)
            #expect(stale.body.readableBytes == 50)
        }
    }

    @Test func bytesHonorRangeForResume() async throws {
        try await TestServerHarness.withServer { server async throws in
            let tail = try await TestServerHarness.fetch(
                server, "/bytes/100000?seed=5",
                headers: [("Range", "bytes=70000-"), ("If-Range", "\"bytes-100000-5\"")])
            #expect(tail.status == .partialContent)
            #expect(tail.bytes == TestServer.expectedBytes(count: 30_000, seed: 5, offset: 70_000))
        }
    }

    @Test func largeDownloadStreamsInOrder() async throws {
        try await TestServerHarness.withServer { server async throws in
            // 3 MiB crosses many tape periods and chunk boundaries; digest compared to the generator.
            let count = 3 * 1024 * 1024 + 17
            let reply = try await TestServerHarness.fetch(server, "/bytes/\(count)?seed=99")
            #expect(reply.body.readableBytes == count)
            #expect(
                sha256Hex(reply.bytes)
                    == sha256Hex(TestServer.expectedBytes(count: count, seed: 99)))
        }
    }

    @Test func dripSendsTheRequestedBytes() async throws {
        try await TestServerHarness.withServer { server async throws in
            let reply = try await TestServerHarness.fetch(server, "/drip?numbytes=5&duration=0.05&code=201")
            #expect(reply.status == .created)
            #expect(reply.text == "*****")
            #expect(reply.headers.first(name: "Content-Length") == "5")
        }
    }
}

import AsyncHTTPClient
import CourierTestServer
import NIOCore
import NIOHTTP1
import Testing

@Suite("Test server: /sse, /ndjson and the compression bombs", .timeLimit(.minutes(3)))
struct StreamingEndpointTests {
    static func events(_ ids: ClosedRange<Int>, type: String? = nil, lines: Int = 1) -> String {
        ids.map { id in
            var text = "id: \(id)\n"
            if let type { text += "event: \(type)\n" }
            text += "data: event \(id)\n"
            for line in stride(from: 2, through: lines, by: 1) { text += "data: line \(line) of event \(id)\n" }
            return text + "\n"
        }.joined()
    }

    /// The body of a raw chunked response, and whether it ended with the last chunk. Bytes, not
    /// `String`: there CR LF is one `Character`.
    static func dechunk(_ raw: [UInt8]) -> (chunks: [String], complete: Bool) {
        let crlf: [UInt8] = [13, 10]
        func find(_ pattern: [UInt8], from index: Int) -> Int? {
            guard raw.count >= pattern.count else { return nil }
            return (index...(raw.count - pattern.count)).first { Array(raw[$0..<($0 + pattern.count)]) == pattern }
        }
        guard raw.count >= 4, var index = find(crlf + crlf, from: 0).map({ $0 + 4 }) else { return ([], false) }
        var chunks: [String] = []
        while index < raw.count, let lineEnd = find(crlf, from: index),
            let size = Int(String(decoding: raw[index..<lineEnd], as: UTF8.self), radix: 16)
        {
            if size == 0 { return (chunks, true) }
            let start = lineEnd + 2
            guard start + size + 2 <= raw.count else { break }
            chunks.append(String(decoding: raw[start..<(start + size)], as: UTF8.self))
            index = start + size + 2
        }
        return (chunks, false)
    }

    @Test func sseSendsNumberedEvents() async throws {
        try await TestServerHarness.withServer { server async throws in
            let reply = try await TestServerHarness.fetch(server, "/sse")
            #expect(reply.status == .ok)
            #expect(reply.headers.first(name: "Content-Type") == "text/event-stream")
            #expect(reply.headers.first(name: "Cache-Control") == "no-cache")
            #expect(reply.text == Self.events(1...5))

            let shaped = try await TestServerHarness.fetch(server, "/sse?count=3&retry=250&event=tick&lines=2")
            #expect(shaped.text == "retry: 250\n\n" + Self.events(1...3, type: "tick", lines: 2))
            #expect(try await TestServerHarness.fetch(server, "/sse?count=0").text == "")
        }
    }

    @Test func sseResumesAfterLastEventID() async throws {
        try await TestServerHarness.withServer { server async throws in
            let resumed = try await TestServerHarness.fetch(server, "/sse?count=5", headers: [("Last-Event-ID", "3")])
            #expect(resumed.text == Self.events(4...5))
            let byQuery = try await TestServerHarness.fetch(server, "/sse?count=5&last_event_id=1")
            #expect(byQuery.text == Self.events(2...5))
            // Past the end: 204, which tells an EventSource to stop reconnecting.
            let done = try await TestServerHarness.fetch(server, "/sse?count=5", headers: [("Last-Event-ID", "5")])
            #expect(done.status == .noContent)
            let unknown = try await TestServerHarness.fetch(server, "/sse?count=2", headers: [("Last-Event-ID", "abc")])
            #expect(unknown.text == Self.events(1...2))
        }
    }

    @Test func sseSplitsEveryByteIntoItsOwnChunk() async throws {
        try await TestServerHarness.withServer { server async throws in
            let raw = try await TestServerHarness.rawExchange(
                server, "GET /sse?count=2&retry=5&split=byte HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let (chunks, complete) = Self.dechunk(raw.bytes)
            #expect(complete)
            #expect(chunks.joined() == "retry: 5\n\n" + Self.events(1...2))
            #expect(chunks.allSatisfy { $0.utf8.count == 1 })
        }
    }

    @Test func sseDropsTheConnectionAfterNEvents() async throws {
        try await TestServerHarness.withServer { server async throws in
            let raw = try await TestServerHarness.rawExchange(
                server, "GET /sse?count=5&drop_after=2 HTTP/1.1\r\nHost: x\r\n\r\n")
            let (chunks, complete) = Self.dechunk(raw.bytes)
            #expect(!complete)
            #expect(!raw.closedByClientBound)
            #expect(chunks.joined() == Self.events(1...2))
            // The same through a client: the body fails rather than ends.
            await #expect(throws: (any Error).self) {
                _ = try await TestServerHarness.fetch(server, "/sse?count=5&drop_after=2")
            }
        }
    }

    @Test func sseRejectsBadOptions() async throws {
        try await TestServerHarness.withServer { server async throws in
            for query in [
                "count=-1", "lines=0", "retry=1x", "retry=", "delay_ms=70000", "drop_after=-1", "event=a%0Ab",
            ] {
                #expect(try await TestServerHarness.fetch(server, "/sse?\(query)").status == .badRequest, "\(query)")
            }
        }
    }

    @Test func ndjsonSendsLines() async throws {
        try await TestServerHarness.withServer { server async throws in
            let reply = try await TestServerHarness.fetch(server, "/ndjson?count=3")
            #expect(reply.headers.first(name: "Content-Type") == "application/x-ndjson")
            #expect(
                reply.text
                    == "{\"id\":1,\"name\":\"item 1\"}\n{\"id\":2,\"name\":\"item 2\"}\n{\"id\":3,\"name\":\"item 3\"}\n"
            )
            let broken = try await TestServerHarness.fetch(server, "/ndjson?count=3&invalid_at=2&crlf=1")
            #expect(broken.text == "{\"id\":1,\"name\":\"item 1\"}\r\n{\"id\":2,\r\n{\"id\":3,\"name\":\"item 3\"}\r\n")
            #expect(try await TestServerHarness.fetch(server, "/ndjson?count=x").text.contains("item 10"))
        }
    }

    @Test(arguments: ["gzip", "deflate"])
    func bombsAreValidStreamsOfZeros(_ coding: String) async throws {
        try await TestServerHarness.withServer { server async throws in
            let raw = try await TestServerHarness.fetch(server, "/\(coding)-bomb?size=1000000")
            #expect(raw.headers.first(name: "Content-Encoding") == coding)
            #expect(raw.headers.first(name: "X-Decoded-Length") == "999751")  // 1 + 3875 × 258
            #expect(raw.body.readableBytes < 1_000_000 / 150)

            var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
            configuration.decompression = .enabled(limit: .none)
            let inflating = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            let decoded: TestServerHarness.Reply
            do {
                decoded = try await TestServerHarness.fetch(server, "/\(coding)-bomb?size=1000000", client: inflating)
            } catch {
                try? await inflating.shutdown()
                throw error
            }
            try await inflating.shutdown()
            #expect(decoded.body.readableBytes == 999_751)
            #expect(decoded.bytes.allSatisfy { $0 == 0 })
        }
    }
}

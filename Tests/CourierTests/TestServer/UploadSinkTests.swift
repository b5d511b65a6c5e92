import AsyncHTTPClient
import CourierDigest
import CourierTestServer
import NIOCore
import NIOHTTP1
import Testing

@Suite("Test server: upload sink", .timeLimit(.minutes(3)))
struct UploadSinkTests {
    @Test func rawBodyDigestMatchesClientSide() async throws {
        try await TestServerHarness.withServer { server async throws in
            let body = TestServer.expectedBytes(count: 1_000_003, seed: 3)
            let reply = try await TestServerHarness.fetch(server, "/upload", method: .POST, body: body)
            let json = try reply.json()
            #expect(json["bytes"]?.intValue == body.count)
            #expect(json["sha256"]?.stringValue == sha256Hex(body))
            #expect(json["content_length"]?.stringValue == "1000003")
            #expect(json["transfer_encoding"] == .null)
            #expect(json["parts"] == [])
            #expect(json["method"] == "POST")
        }
    }

    @Test func chunkedStreamedBodyIsCountedWithTransferEncoding() async throws {
        try await TestServerHarness.withServer { server async throws in
            let pieces: [[UInt8]] = (0..<20).map { Array(repeating: UInt8($0), count: 10_000 + $0) }
            var request = HTTPClientRequest(url: server.url("/upload").absoluteString)
            request.method = .PUT
            request.body = .stream(TestServerBufferSequence(pieces), length: .unknown)
            let response = try await TestServerHarness.client.execute(request, timeout: .seconds(30))
            let json = try #require(
                TestServerJSON.parse(try await response.body.collect(upTo: 1 << 20).readableBytesView))
            let all = pieces.flatMap { $0 }
            #expect(json["bytes"]?.intValue == all.count)
            #expect(json["sha256"]?.stringValue == sha256Hex(all))
            #expect(json["transfer_encoding"] == "chunked")
            #expect(json["content_length"] == .null)
        }
    }

    @Test func multipartPartsAreReportedWithDigests() async throws {
        try await TestServerHarness.withServer { server async throws in
            let file = TestServer.expectedBytes(count: 300_000, seed: 11)
            var body: [UInt8] = []
            body += Array("--b0undary\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nhello".utf8)
            body += Array(
                "\r\n--b0undary\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"p.jpg\"\r\nContent-Type: image/jpeg\r\nX-Extra: 1\r\n\r\n"
                    .utf8)
            body += file
            body += Array("\r\n--b0undary--\r\n".utf8)
            let reply = try await TestServerHarness.fetch(
                server, "/upload", method: .POST, headers: [("Content-Type", "multipart/form-data; boundary=b0undary")],
                body: body)
            #expect(reply.status == .ok)
            let json = try reply.json()
            #expect(json["sha256"]?.stringValue == sha256Hex(body))
            #expect(json["part_count"] == 2)
            let parts = try #require(json["parts"]?.arrayValue)
            #expect(parts.count == 2)
            #expect(parts[0]["name"] == "title")
            #expect(parts[0]["filename"] == .null)
            #expect(parts[0]["size"] == 5)
            #expect(parts[0]["sha256"]?.stringValue == sha256Hex(Array("hello".utf8)))
            #expect(parts[1]["name"] == "photo")
            #expect(parts[1]["filename"] == "p.jpg")
            #expect(parts[1]["content_type"] == "image/jpeg")
            #expect(parts[1]["headers"]?["X-Extra"] == "1")
            #expect(parts[1]["size"]?.intValue == file.count)
            #expect(parts[1]["sha256"]?.stringValue == sha256Hex(file))
        }
    }

    @Test func truncatedMultipartIs400WithReason() async throws {
        try await TestServerHarness.withServer { server async throws in
            let body = Array("--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nno end".utf8)
            let reply = try await TestServerHarness.fetch(
                server, "/upload", method: .POST, headers: [("Content-Type", "multipart/form-data; boundary=B")],
                body: body)
            #expect(reply.status == .badRequest)
            #expect(try reply.json()["error"]?.stringValue?.contains("closing boundary") == true)
        }
    }

    @Test func getIsNotAllowed() async throws {
        try await TestServerHarness.withServer { server async throws in
            let reply = try await TestServerHarness.fetch(server, "/upload")
            #expect(reply.status == .methodNotAllowed)
        }
    }
}

/// An async sequence of fixed buffers, for streamed (chunked) request bodies.
struct TestServerBufferSequence: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let pieces: [[UInt8]]
    init(_ pieces: [[UInt8]]) { self.pieces = pieces }

    struct AsyncIterator: AsyncIteratorProtocol {
        var remaining: ArraySlice<[UInt8]>
        mutating func next() async -> ByteBuffer? {
            guard let piece = remaining.popFirst() else { return nil }
            return ByteBuffer(bytes: piece)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(remaining: pieces[...]) }
}

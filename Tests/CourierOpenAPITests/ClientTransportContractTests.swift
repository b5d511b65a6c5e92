import Courier
import CourierOpenAPI
import CourierOpenAPIExample
import CourierTestServer
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// What OpenAPIRuntime's `ClientTransport` documentation asks of a transport, and what
/// CourierClientTransport promises on top, against the embedded test server.
@Suite("CourierOpenAPI: the ClientTransport contract", .timeLimit(.minutes(3)))
struct ClientTransportContractTests {
    let transport = CourierClientTransport(manager: SessionManager(transport: AsyncHTTPClientTransport()))

    @Test("the request's path and query join the base URL's path, with or without a trailing slash")
    func urlJoining() async throws {
        try await withServer { server in
            for base in ["/anything/api", "/anything/api/"] {
                let baseURL = try #require(URL(string: server.baseURL.absoluteString + base))
                let (response, body) = try await transport.send(.get, "/users/a%20b?x=1&y=%2F", baseURL: baseURL)
                #expect(response.status == .ok)
                let echo = try await jsonObject(body)
                #expect((echo["url"] as? String)?.hasSuffix("/anything/api/users/a%20b?x=1&y=%2F") == true)
            }
            await expectCourierError(.invalidURL) {
                try await transport.send(.get, "no-leading-slash", baseURL: server.baseURL)
            }
        }
    }

    @Test("method and header fields go out as given, and response headers come back")
    func methodAndHeaders() async throws {
        try await withServer { server in
            let (response, body) = try await transport.send(
                .delete, "/anything/x", headers: [HTTPField.Name("X-Operation")!: "deleteThing"],
                baseURL: server.baseURL)
            #expect(response.status == .ok)
            #expect(response.headerFields[.contentType] == "application/json")
            let echo = try await jsonObject(body)
            #expect(echo["method"] as? String == "DELETE")
            #expect((echo["headers"] as? [String: String])?["X-Operation"] == "deleteThing")
        }
    }

    @Test(
        "a known length goes out with Content-Length, small or streamed; an unknown one chunked",
        arguments: [100, 300_000])
    func requestFraming(size: Int) async throws {
        try await withServer { server in
            let known = try await ExampleTour.upload(
                ExampleTour.generatedBody(count: size, chunkSize: 7_000), over: transport, serverURL: server.baseURL)
            #expect(known.bytes == Int64(size))
            #expect(known.contentLength == String(size))
            #expect(known.transferEncoding == nil)

            let unknown = try await ExampleTour.upload(
                ExampleTour.generatedBody(count: size, chunkSize: 7_000, length: .unknown), over: transport,
                serverURL: server.baseURL)
            #expect(unknown.bytes == Int64(size))
            #expect(unknown.contentLength == nil)
            #expect(unknown.transferEncoding == "chunked")
            #expect(unknown.sha256 == known.sha256)
        }
    }

    @Test("a body that yields fewer bytes than its declared length is an error, not a short body")
    func declaredLengthChecked() async throws {
        try await withServer { server in
            for size in [100, 300_000] {
                let body = ExampleTour.generatedBody(count: size, length: .known(Int64(size + 1)))
                await expectCourierError(.bodyLengthMismatch) {
                    try await transport.send(.post, "/upload", body: body, baseURL: server.baseURL)
                }
            }
        }
    }

    @Test("every status is a response, not an error: 404, 503, 418 with its body")
    func statusesAreResponses() async throws {
        try await withServer { server in
            for code in [404, 503, 418] {
                let (response, body) = try await transport.send(.get, "/status/\(code)", baseURL: server.baseURL)
                #expect(response.status.code == code)
                if code == 418 {
                    let text = try await String(collecting: try #require(body), upTo: 1024)
                    #expect(text.contains("teapot"))
                }
            }
        }
    }

    @Test("the response body streams with its Content-Length, or an unknown length when chunked")
    func responseBodies() async throws {
        try await withServer { server in
            let (_, known) = try await transport.send(.get, "/bytes/100000?seed=3", baseURL: server.baseURL)
            let knownBody = try #require(known)
            #expect(knownBody.length == .known(100_000))
            #expect(knownBody.iterationBehavior == .single)
            let bytes = try await [UInt8](collecting: knownBody, upTo: 1 << 20)
            #expect(bytes == TestServer.expectedBytes(count: 100_000, seed: 3))

            let (_, chunked) = try await transport.send(.get, "/stream-bytes/100000?seed=3", baseURL: server.baseURL)
            let chunkedBody = try #require(chunked)
            #expect(chunkedBody.length == .unknown)
            #expect(try await [UInt8](collecting: chunkedBody, upTo: 1 << 20) == bytes)
        }
    }

    @Test("a streamed response body can be read once; a second reader gets an error")
    func responseBodyReadOnce() async throws {
        try await withServer { server in
            let (_, body) = try await transport.send(.get, "/bytes/10", baseURL: server.baseURL)
            let bodyOnce = try #require(body)
            #expect(try await [UInt8](collecting: bodyOnce, upTo: 100).count == 10)
            await #expect(throws: (any Error).self) { _ = try await [UInt8](collecting: bodyOnce, upTo: 100) }
        }
    }

    @Test("HEAD and 204 answers have no body")
    func bodylessAnswers() async throws {
        try await withServer { server in
            let (head, headBody) = try await transport.send(.head, "/get", baseURL: server.baseURL)
            #expect(head.status == .ok)
            #expect(headBody == nil)
            let (noContent, noContentBody) = try await transport.send(.get, "/status/204", baseURL: server.baseURL)
            #expect(noContent.status == .noContent)
            #expect(noContentBody == nil)
        }
    }

    @Test("a 307 and a 308 resend a .multiple body, small or streamed, intact", arguments: [307, 308])
    func redirectResendsReplayableBody(status: Int) async throws {
        try await withServer { server in
            for size in [1_000, 2_000_000] {
                let direct = try await ExampleTour.upload(
                    ExampleTour.generatedBody(count: size), over: transport, serverURL: server.baseURL)
                let redirected = try await ExampleTour.upload(
                    ExampleTour.generatedBody(count: size), redirectStatus: status, over: transport,
                    serverURL: server.baseURL)
                #expect(redirected == direct)
                #expect(redirected.bytes == Int64(size))
                #expect(redirected.method == "POST")
            }
        }
    }

    @Test("a 307 that needs a .single body again fails with bodyNotReplayable, not an empty resend")
    func redirectRefusesOneShotBody() async throws {
        try await withServer { server in
            let body = ExampleTour.generatedBody(count: 100_000, iterationBehavior: .single)
            let error = await expectCourierError(.bodyNotReplayable) {
                try await ExampleTour.upload(body, redirectStatus: 307, over: transport, serverURL: server.baseURL)
            }
            #expect(error?.response?.statusCode == 307)
            #expect(!server.stats.recentRequestHeads.contains { $0.uri.hasPrefix("/upload") })
        }
    }

    @Test("connection failures, deadlines and redirect loops are CourierErrors under ClientError")
    func errorsThroughGeneratedClient() async throws {
        // Port 1, where nothing listens: a port freed by a server of this test could be taken by
        // one of the hundreds that the parallel suite starts, whose stats tests then count
        // this test's requests (seen once).
        let unreachable = try #require(URL(string: "http://127.0.0.1:1"))
        let lines = await ExampleTour.run(over: transport, serverURL: unreachable)
        #expect(lines.first == "getEcho: error connectionFailed")
        #expect(lines.allSatisfy { $0.hasSuffix("error connectionFailed") })
    }

    @Test("cancelling the calling task cancels the exchange, before the head and while reading the body")
    func cancellation() async throws {
        try await withServer { server in
            let waiting = Task {
                try await transport.send(.get, "/fault/never-answer?max_ms=60000", baseURL: server.baseURL)
            }
            while server.stats.requestsReceived == 0 { try await Task.sleep(for: .milliseconds(10)) }
            waiting.cancel()
            await expectCourierError(.cancelled) { try await waiting.value }

            let reading = Task {
                let (_, body) = try await transport.send(
                    .get, "/fault/drip-forever?interval_ms=20&max_ms=60000", baseURL: server.baseURL)
                var received = 0
                for try await chunk in try #require(body) {
                    received += chunk.count
                    if received >= 2 { withUnsafeCurrentTask { $0?.cancel() } }
                }
                return received
            }
            await #expect(throws: (any Error).self) { _ = try await reading.value }
        }
    }
}

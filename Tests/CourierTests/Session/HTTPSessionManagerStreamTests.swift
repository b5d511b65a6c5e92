import Courier
import CourierTestServer
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import CourierCore

/// The HTTPSessionManager's streamed verbs (requests built as the buffered verbs build them),
/// and the session's interceptor applied to a stream: adapted on every attempt, and a retried
/// status answered by a later attempt before the head is handed over.
@Suite("HTTPSessionManager: stream verbs, and the interceptor on streams", .timeLimit(.minutes(3)))
struct HTTPSessionManagerStreamTests {
    static func withManager<R>(
        interceptor: (any RequestInterceptor)? = nil, _ body: (TestServer, HTTPSessionManager) async throws -> R
    ) async throws -> R {
        let transport = AsyncHTTPClientTransport()
        let server = try await TestServer.start()
        let session = SessionManager(transport: transport, interceptor: interceptor)
        let manager = HTTPSessionManager(baseURL: server.baseURL, session: session)
        do {
            let result = try await body(server, manager)
            try await transport.shutdown()
            try await server.shutdown()
            return result
        } catch {
            try? await transport.shutdown()
            try? await server.shutdown()
            throw error
        }
    }

    @Test("get.stream: parameters in the query, serializer headers, lines as they come")
    func getStream() async throws {
        try await Self.withManager { server, manager in
            var serializer = HTTPRequestSerializer()
            serializer.setValue("stream-test", forHTTPHeaderField: "X-Client")
            manager.requestSerializer = serializer
            let response = try await manager.get.stream("ndjson", parameters: ["count": 3])
            #expect(response.head.statusCode == 200)
            #expect(response.request.url.query == "count=3")
            var lines: [String] = []
            for try await line in response.lines() { lines.append(line) }
            #expect(lines.count == 3)
            #expect(server.stats.lastRequestHead?.value("X-Client") == "stream-test")
        }
    }

    @Test("post.stream(.json): the body as JSON, events back; parameters in a POST body")
    func postStream() async throws {
        struct Prompt: Encodable { let prompt: String }
        try await Self.withManager { server, manager in
            let response = try await manager.post.stream("sse?count=2&event=delta", .json(Prompt(prompt: "hi")))
            var events: [ServerSentEvent] = []
            for try await event in response.serverSentEvents() { events.append(event) }
            #expect(events.map(\.type) == ["delta", "delta"])
            #expect(events.map(\.data) == ["event 1", "event 2"])
            let head = try #require(server.stats.lastRequestHead)
            #expect(head.method == "POST")
            #expect(head.value("Content-Type") == "application/json")
            #expect(head.value("Content-Length") == String(#"{"prompt":"hi"}"#.utf8.count))

            let form = try await manager.post.stream("ndjson?count=1", parameters: ["a": "b"])
            for try await _ in form.body {}
            #expect(
                server.stats.lastRequestHead?.value("Content-Type")?.hasPrefix("application/x-www-form-urlencoded")
                    == true)
        }
    }

    @Test("a status outside 200-299 throws with the head unless the caller accepts any")
    func statusChecked() async throws {
        try await Self.withManager { _, manager in
            let error = await #expect(throws: CourierError.self) { _ = try await manager.get.stream("status/418") }
            #expect(error?.code == .unacceptableStatusCode)
            #expect(error?.response?.statusCode == 418)
            let any = try await manager.get.stream("status/418", acceptableStatusCodes: nil)
            #expect(any.head.statusCode == 418)
        }
    }

    @Test("eventSource(_:) on the base URL reconnects after the default wait with Last-Event-ID, ends on 204")
    func eventSource() async throws {
        try await Self.withManager { server, manager in
            var options = ServerSentEventSource.Options()
            options.maximumReconnectionsWithoutEvent = 3
            options.reconnectionTime = .milliseconds(7)  // no retry field in this stream
            let waits = NIOLockedValueBox<[Duration]>([])
            options.sleeper = { duration in waits.withLockedValue { $0.append(duration) } }
            let source = try manager.eventSource("sse", parameters: ["count": 4, "drop_after": 2], options: options)
            var ids: [String] = []
            for try await event in source { ids.append(event.lastEventID) }
            #expect(ids == ["1", "2", "3", "4"])
            let heads = server.stats.recentRequestHeads.filter { $0.uri.hasPrefix("/sse") }
            #expect(heads.map { $0.value("Last-Event-ID") } == [nil, "2", "4"])
            #expect(waits.withLockedValue { $0 } == [.milliseconds(7), .milliseconds(7)])
        }
    }

    /// Adds a header on every attempt and retries a 503 once.
    struct CountingInterceptor: RequestInterceptor {
        let attempts = NIOLockedValueBox(0)

        func adapt(_ request: Request) async throws -> Request {
            var request = request
            let attempt = attempts.withLockedValue { count -> Int in
                count += 1
                return count
            }
            try request.setValue("attempt-\(attempt)", forHTTPHeaderField: "X-Attempt")
            return request
        }

        func retry(_ request: Request, response: ResponseHead?, error: CourierError?, retryCount: Int) async
            -> RetryDecision
        {
            response?.statusCode == 503 && retryCount == 0 ? .retry : .doNotRetry
        }
    }

    @Test("the interceptor adapts a stream's request and retries its failed status before the head")
    func interceptorAppliesToStreams() async throws {
        let interceptor = CountingInterceptor()
        try await Self.withManager(interceptor: interceptor) { server, manager in
            let response = try await manager.get.stream("fault/flaky", parameters: ["id": "stream", "failures": 1])
            #expect(response.head.statusCode == 200)
            var body = Data()
            for try await chunk in response.body { body.append(contentsOf: chunk.readableBytesView) }
            let document = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            #expect(document["attempt"] as? Int == 2)
            #expect(interceptor.attempts.withLockedValue { $0 } == 2)
            #expect(server.stats.lastRequestHead?.value("X-Attempt") == "attempt-2")
        }
    }
}

import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import Testing
import Tracing

/// Spans from `SessionManager.Configuration.tracer`: one per task and one per attempt, named
/// and attributed as OpenTelemetry's HTTP client conventions say, with trace context sent.
@Suite(.timeLimit(.minutes(3)))
struct TracingTests {
    @Test func aTaskSpanAndAnAttemptSpanWithTheConventionsAttributes() async throws {
        let tracer = RecordingTracer()
        try await withObservedSession(configure: { $0.tracer = tracer }) { server, manager in
            _ = try await manager.data(for: Request(url: serverURL(server, "/get?q=1")))
            let spans = tracer.spans
            #expect(spans.count == 2)
            let task = try #require(spans.first)
            let attempt = try #require(spans.last)
            #expect(task.operationName == "GET")
            #expect(task.kind == .client)
            #expect(attempt.kind == .client)
            #expect(attempt.parentSpanID == task.spanID)
            #expect(attempt.traceID == task.traceID)
            #expect(spans.allSatisfy { $0.ended })
            let expected: [String: String] = [
                "http.request.method": "GET",
                "url.full": "http://127.0.0.1:\(server.port)/get?q=1",
                "server.address": "127.0.0.1",
                "server.port": "\(server.port)",
                "http.response.status_code": "200",
                "network.protocol.version": "1.1",
            ]
            #expect(attempt.attributeStrings == expected)
            var taskExpected = expected
            taskExpected["network.protocol.version"] = nil
            #expect(task.attributeStrings == taskExpected)
            // The attempt's context went out as W3C trace context.
            let head = try #require(server.stats.lastRequestHead)
            let traceparent = head.headers.first { $0.name.lowercased() == "traceparent" }?.value
            #expect(traceparent == "00-\(attempt.traceID ?? "")-\(attempt.spanID ?? "")-01")
        }
    }

    @Test func retriesAreResendCountsAndFailuresAnErrorType() async throws {
        let tracer = RecordingTracer()
        try await withObservedSession(configure: { $0.tracer = tracer }, interceptor: RetryPolicy(retryLimit: 1)) {
            server, manager in
            let id = "trace-\(UUID().uuidString)"
            _ = try await manager.data(
                for: Request(url: serverURL(server, "/fault/flaky?id=\(id)&failures=2&status=503")))
            let spans = tracer.spans
            #expect(spans.count == 3)
            let attempts = Array(spans.dropFirst())
            #expect(attempts.map { $0.attributeStrings["http.request.resend_count"] } == [nil, "1"])
            #expect(attempts.map { $0.attributeStrings["http.response.status_code"] } == ["503", "503"])
            #expect(attempts.map { $0.attributeStrings["error.type"] } == ["503", "503"])
            #expect(attempts.allSatisfy { $0.status?.code == .error })
            #expect(spans.first?.attributeStrings["error.type"] == "503")
        }
    }

    @Test func aConnectionFailureEndsBothSpansWithItsCode() async throws {
        let tracer = RecordingTracer()
        var configuration = SessionManager.Configuration()
        configuration.tracer = tracer
        let manager = SessionManager(configuration: configuration)
        await #expect(throws: CourierError.self) {
            _ = try await manager.data(for: Request(url: URL(string: "http://127.0.0.1:1/nothing")!))
        }
        let spans = tracer.spans
        #expect(spans.count == 2)
        #expect(spans.allSatisfy { $0.ended })
        #expect(spans.map { $0.attributeStrings["error.type"] } == ["connectionFailed", "connectionFailed"])
        #expect(spans.first?.recordedErrors.count == 1)
    }

    @Test func credentialsNeverReachAnAttribute() async throws {
        let tracer = RecordingTracer()
        try await withObservedSession(configure: { $0.tracer = tracer }) { server, manager in
            let url = URL(string: "http://ann:hunter2@127.0.0.1:\(server.port)/get?sig=s3cr3t&keep=1")!
            var request = Request(url: url)
            request.headerFields[.authorization] = "Bearer t0ken"
            _ = try await manager.data(for: request)
            for span in tracer.spans {
                for value in span.attributeStrings.values {
                    #expect(!value.contains("hunter2"))
                    #expect(!value.contains("s3cr3t"))
                    #expect(!value.contains("t0ken"))
                }
                // The session takes user-info out of the URL before anything reads it (a Basic
                // header when the request has none; here its own Bearer one wins).
                #expect(span.attributeStrings["url.full"] == "http://127.0.0.1:\(server.port)/get?sig=REDACTED&keep=1")
            }
        }
    }

    @Test func aNoOpTracerRecordsNothingAndSendsNoTraceContext() async throws {
        try await withObservedSession(configure: { $0.tracer = NoOpTracer() }) { server, manager in
            _ = try await manager.data(for: Request(url: serverURL(server, "/get")))
            let head = try #require(server.stats.lastRequestHead)
            #expect(!head.headers.contains { $0.name.lowercased() == "traceparent" })
        }
    }
}

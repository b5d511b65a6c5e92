import Courier
import CourierTestServer
import CourierTesting
import Foundation
import Testing

/// `SessionResponse.metrics` against what the test server did: attempts, bytes, connections.
@Suite(.timeLimit(.minutes(3)))
struct TaskMetricsTests {
    /// The instants of one attempt are in the order the exchange went through them.
    private func expectOrdered(_ attempt: AttemptMetrics, sourceLocation: SourceLocation = #_sourceLocation) {
        let instants = [
            attempt.requestStart, attempt.requestHeadSent, attempt.requestBodySent, attempt.responseHeadReceived,
            attempt.responseBodyComplete,
        ].compactMap { $0 }
        #expect(instants == instants.sorted(), sourceLocation: sourceLocation)
    }

    @Test func aGetHasOneAttemptWithItsStatusBytesAndConnection() async throws {
        try await withObservedSession { server, manager in
            let response = try await manager.data(for: Request(url: serverURL(server, "/bytes/1500?seed=1")))
            let metrics = response.metrics
            #expect(metrics.attempts.count == 1)
            let attempt = try #require(metrics.attempts.first)
            #expect(attempt.reason == .initial)
            #expect(attempt.statusCode == 200)
            #expect(attempt.bytesSent == 0)
            #expect(attempt.bytesReceived == 1500)
            #expect(attempt.decodedBytesReceived == 1500)
            #expect(attempt.httpVersion == .http11)
            #expect(attempt.reusedConnection == false)
            #expect(attempt.remoteAddress == "127.0.0.1:\(server.port)")
            #expect(attempt.requestHeadSent != nil)
            #expect(attempt.responseHeadReceived != nil)
            #expect(attempt.responseBodyComplete != nil)
            expectOrdered(attempt)
            #expect(metrics.taskStart <= attempt.requestStart)
            #expect(try #require(attempt.responseBodyComplete) <= metrics.taskEnd)
            #expect(response.response.httpVersion == .http11)
        }
    }

    @Test func theSecondRequestOverKeepAliveReusesTheConnection() async throws {
        try await withObservedSession { server, manager in
            let first = try await manager.data(for: Request(url: serverURL(server, "/get")))
            let second = try await manager.data(for: Request(url: serverURL(server, "/get")))
            #expect(first.metrics.attempts.first?.reusedConnection == false)
            #expect(second.metrics.attempts.first?.reusedConnection == true)
            #expect(server.stats.connectionsAccepted == 1)
        }
    }

    @Test func aRedirectGivesTwoAttempts() async throws {
        try await withObservedSession { server, manager in
            let response = try await manager.data(for: Request(url: serverURL(server, "/redirect/1")))
            let attempts = response.metrics.attempts
            #expect(attempts.map(\.reason) == [.initial, .redirect])
            #expect(attempts.map(\.statusCode) == [302, 200])
            #expect(attempts.map(\.url.path) == ["/redirect/1", "/get"])
            #expect(response.metrics.redirectCount == 1)
            #expect(attempts[0].responseBodyComplete == nil)
            #expect(try #require(attempts[0].responseHeadReceived) <= attempts[1].requestStart)
            #expect(attempts[1].reusedConnection == true)
            #expect(server.stats.requestsReceived == 2)
        }
    }

    @Test func aRetryIsAnAttemptOfItsOwn() async throws {
        try await withObservedSession(interceptor: RetryPolicy(retryLimit: 2)) { server, manager in
            let url = serverURL(server, "/fault/flaky?id=metrics-\(UUID().uuidString)&failures=1&status=503")
            let response = try await manager.data(for: Request(url: url))
            let attempts = response.metrics.attempts
            #expect(attempts.map(\.reason) == [.initial, .retry])
            #expect(attempts.map(\.statusCode) == [503, 200])
            #expect(response.metrics.retryCount == 1)
            #expect(server.stats.requestsReceived == 2)
            for attempt in attempts { expectOrdered(attempt) }
        }
    }

    @Test func bytesSentAreTheBodyLength() async throws {
        try await withObservedSession { server, manager in
            let body = Data(repeating: 0x61, count: 70_000)
            let request = Request(method: .post, url: serverURL(server, "/post"), body: .data(body))
            let response = try await manager.data(for: request)
            let attempt = try #require(response.metrics.attempts.first)
            #expect(attempt.bytesSent == Int64(body.count))
            #expect(attempt.requestBodySent != nil)
            #expect(attempt.bytesReceived == Int64(response.data.count))
            expectOrdered(attempt)
        }
    }

    @Test func aCompressedBodyCountsWireAndDecodedBytesApart() async throws {
        try await withObservedSession { server, manager in
            let response = try await manager.data(for: Request(url: serverURL(server, "/gzip")))
            let attempt = try #require(response.metrics.attempts.first)
            #expect(attempt.decodedBytesReceived == Int64(response.data.count))
            if let length = response.response.expectedContentLength {
                #expect(attempt.bytesReceived == length)
            }
        }
    }

    @Test func downloadsAndStreamsCarryMetrics() async throws {
        try await withObservedSession { server, manager in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "metrics-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let download = try await manager.download(Request(url: serverURL(server, "/bytes/4096"))) { _, _ in
                directory.appendingPathComponent("file")
            }
            #expect(download.metrics.attempts.first?.bytesReceived == 4096)
            let stream = try await manager.stream(Request(url: serverURL(server, "/bytes/100")))
            #expect(stream.metrics.attempts.first?.statusCode == 200)
            #expect(stream.metrics.attempts.first?.responseBodyComplete == nil)
            var count = 0
            for try await chunk in stream.body { count += chunk.readableBytes }
            #expect(count == 100)
        }
    }

    @Test func aFailedTaskCarriesItsAttemptsInTheError() async throws {
        try await withObservedSession { server, manager in
            // A redirect hop answered, then a body cut short: two attempts, the second failed.
            let cut = "/fault/close-mid-response?after=1000&total=5000"
            let target = try #require(cut.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let url = serverURL(server, "/redirect-to?url=\(target)")
            do {
                _ = try await manager.data(for: Request(url: url))
                Issue.record("a body cut short must fail")
            } catch let error as CourierError {
                let metrics = try #require(error.metrics)
                #expect(metrics.attempts.map(\.reason) == [.initial, .redirect])
                #expect(metrics.attempts.first?.statusCode == 302)
                #expect(metrics.attempts.last?.errorCode == error.code)
                #expect(metrics.taskStart <= metrics.taskEnd)
            }
        }
        let refused = SessionManager(transport: ScriptedTransport { _ in .failure(.connectionFailed) })
        do {
            _ = try await refused.data(for: Request(url: URL(string: "http://scripted.test/a")!))
            Issue.record("a refused connection must fail")
        } catch let error as CourierError {
            #expect(error.metrics?.attempts.count == 1)
            #expect(error.metrics?.attempts.first?.errorCode == .connectionFailed)
            #expect(error.metrics?.attempts.first?.statusCode == nil)
        }
    }

    @Test func aTransportThatReportsNothingStillGivesTheSessionsView() async throws {
        let transport = ScriptedTransport { _ in .text("hello") }
        let manager = SessionManager(transport: transport)
        let response = try await manager.data(for: Request(url: URL(string: "http://scripted.test/a")!))
        let attempt = try #require(response.metrics.attempts.first)
        #expect(attempt.statusCode == 200)
        #expect(attempt.bytesReceived == 5)
        #expect(attempt.reusedConnection == nil)
        #expect(attempt.remoteAddress == nil)
        #expect(attempt.responseBodyComplete != nil)
    }

    /// The metrics keep their instants in another form (see `ClockReading`); what a caller or a
    /// transport sets must come back exactly, before and after the first reading taken.
    @Test func instantsSetFromOutsideComeBackExactly() throws {
        let now = ContinuousClock.now
        let earlier = now - .seconds(86_400)
        let later = now + .nanoseconds(1) + .seconds(3)
        var attempt = AttemptMetrics(
            reason: .retry, method: .post, url: URL(string: "http://scripted.test/a")!, requestStart: earlier)
        attempt.requestHeadSent = now
        attempt.requestBodySent = later
        attempt.responseHeadReceived = later
        #expect(attempt.requestStart == earlier)
        #expect(attempt.requestHeadSent == now)
        #expect(attempt.requestBodySent == later)
        #expect(attempt.responseBodyComplete == nil)
        #expect(attempt.timeToResponseHead == earlier.duration(to: later))
        attempt.responseHeadReceived = nil
        #expect(attempt.responseHeadReceived == nil)
        #expect(attempt.duration == nil)

        var metrics = TaskMetrics(taskStart: earlier, taskEnd: later, attempts: [attempt])
        #expect(metrics.taskStart == earlier)
        #expect(metrics.taskEnd == later)
        #expect(metrics.taskInterval == earlier.duration(to: later))
        metrics.taskEnd = now
        #expect(metrics.taskInterval == earlier.duration(to: now))

        let recorder = ExchangeRecorder()
        recorder.requestHeadSent(at: earlier)
        recorder.requestSent(bodyBytes: 7, at: now)
        recorder.responseHeadReceived()
        recorder.responseBodyReceived(wireBytes: 9, at: later)
        let observation = recorder.observation
        #expect(observation.requestHeadSent == earlier)
        #expect(observation.requestBodySent == now)
        #expect(try #require(observation.responseHeadReceived) >= now)
        #expect(observation.responseBodyComplete == later)
        #expect(observation.bodyBytesSent == 7)
        #expect(observation.wireBodyBytesReceived == 9)

        // A request sent with its head, and a head reported with the end: one call each.
        let folded = ExchangeRecorder()
        folded.requestHeadSent(at: earlier, endsRequest: true)
        folded.responseBodyReceived(headAt: now, at: later)
        let foldedObservation = folded.observation
        #expect(foldedObservation.requestHeadSent == earlier)
        #expect(foldedObservation.requestBodySent == earlier)
        #expect(foldedObservation.bodyBytesSent == 0)
        #expect(foldedObservation.responseHeadReceived == now)
        #expect(foldedObservation.responseBodyComplete == later)
    }
}

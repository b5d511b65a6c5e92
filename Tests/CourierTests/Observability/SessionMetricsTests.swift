import Courier
import CourierTestServer
import Foundation
import Metrics
import MetricsTestKit
import Testing

/// swift-metrics from `SessionManager.Configuration.metricsFactory`: the request-duration timer
/// with its dimensions, the active-request meter, byte and retry counters.
@Suite(.timeLimit(.minutes(3)))
struct SessionMetricsTests {
    @Test func theDurationTimerCarriesMethodStatusAndServer() async throws {
        let metrics = TestMetrics()
        try await withObservedSession(configure: { $0.metricsFactory = metrics }) { server, manager in
            let response = try await manager.data(for: Request(url: serverURL(server, "/bytes/700")))
            let dimensions = [
                ("http.request.method", "GET"), ("server.address", "127.0.0.1"), ("server.port", "\(server.port)"),
                ("http.response.status_code", "200"),
            ]
            let timer = try metrics.expectTimer("http.client.request.duration", dimensions)
            #expect(timer.values.count == 1)
            #expect((timer.values.first ?? 0) > 0)
            let server = [
                ("http.request.method", "GET"), ("server.address", "127.0.0.1"), ("server.port", "\(server.port)"),
            ]
            let active = try metrics.expectMeter("http.client.active_requests", server)
            #expect(active.values == [1, 0])
            let received = try metrics.expectCounter("courier.client.bytes_received", server)
            #expect(received.totalValue == Int64(response.data.count))
            #expect(metrics.counters.allSatisfy { $0.label != "courier.client.bytes_sent" })
        }
    }

    @Test func retriesAndSentBytesAreCounted() async throws {
        let metrics = TestMetrics()
        try await withObservedSession(
            configure: { $0.metricsFactory = metrics }, interceptor: RetryPolicy(retryLimit: 2)
        ) {
            server, manager in
            let id = "metrics-\(UUID().uuidString)"
            let request = Request(
                method: .put, url: serverURL(server, "/fault/flaky?id=\(id)&failures=1&status=503"),
                body: .data(Data(repeating: 1, count: 1234)))
            _ = try await manager.data(for: request)
            let dimensions = [
                ("http.request.method", "PUT"), ("server.address", "127.0.0.1"), ("server.port", "\(server.port)"),
            ]
            #expect(try metrics.expectCounter("courier.client.retries", dimensions).totalValue == 1)
            #expect(try metrics.expectCounter("courier.client.bytes_sent", dimensions).totalValue == 2468)
            let timers = metrics.timers(label: "http.client.request.duration")
            let statuses = timers.compactMap { timer in
                timer.dimensions.first { $0.0 == "http.response.status_code" }?.1
            }
            #expect(Set(statuses) == ["503", "200"])
            let failed = metrics.timers(label: "http.client.request.duration", dimensions: [("error.type", "503")])
            #expect(failed.count == 1)
        }
    }
}

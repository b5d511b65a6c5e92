import AsyncHTTPClient
import Courier
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

@Suite struct TransportConfigurationTests {
    /// No tracer is bootstrapped in the test process, so AsyncHTTPClient would hold the no-op
    /// tracer and build a span for every request; the transport leaves tracing off instead.
    @Test func theNoOpTracerIsLeftOut() {
        let configuration = AsyncHTTPClientTransport.Configuration().makeClientConfiguration(
            connectionLedger: ConnectionLedger())
        #expect(configuration.tracing.tracer == nil)
    }

    @Test func theSettingsStillReachAsyncHTTPClient() {
        var settings = AsyncHTTPClientTransport.Configuration()
        settings.maximumConnectionsPerHost = 3
        settings.connectTimeout = .seconds(7)
        let configuration = settings.makeClientConfiguration(connectionLedger: ConnectionLedger())
        #expect(configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit == 3)
        #expect(configuration.timeout.connect == .seconds(7))
    }
}

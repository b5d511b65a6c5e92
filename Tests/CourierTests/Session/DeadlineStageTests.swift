import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import CourierCore

/// The request deadline is one clock from the first byte to the last: it covers connecting and
/// the TLS handshake, not only the exchange, and its error says where the request stood.
@Suite("Session deadlines: every stage, named in the error", .timeLimit(.minutes(3)))
struct DeadlineStageTests {
    /// A listener that never accepts: the TLS client connects, then waits for a ServerHello.
    @Test func aStalledTLSHandshakeEndsAtTheDeadlineNamingTheStage() async throws {
        let listener = try SilentListener()
        defer { listener.close() }  // and alive until then: ARC may end an object after its last use
        var configuration = AsyncHTTPClientTransport.Configuration()
        // Longer than the deadline, so that only the deadline can end the request.
        configuration.connectTimeout = .seconds(5)
        let transport = AsyncHTTPClientTransport(configuration: configuration)
        let manager = SessionManager(transport: transport)
        var request = Request(url: try #require(URL(string: "https://127.0.0.1:\(listener.port)/")))
        request.timeoutInterval = 0.5
        let error = await #expect(throws: CourierError.self) { try await manager.data(for: request) }
        #expect(error?.code == .timedOut)
        #expect(error?.message.contains("before the response began") == true, "\(String(describing: error))")
        try await manager.shutdown()
        // AsyncHTTPClient finishes the connection attempt (its 5 s) before it has shut down.
        try await transport.shutdown()
    }

    @Test func aSilentServerEndsAtTheDeadlineWaitingForTheResponse() async throws {
        let server = try await TestServer.start()
        let transport = AsyncHTTPClientTransport()
        let manager = SessionManager(transport: transport)
        var request = Request(url: server.url("/fault/never-answer"))
        request.timeoutInterval = 0.5
        let error = await #expect(throws: CourierError.self) { try await manager.data(for: request) }
        #expect(error?.code == .timedOut)
        #expect(error?.message.contains("waiting for the response") == true, "\(String(describing: error))")
        try await manager.shutdown()
        try await transport.shutdown()
        try await server.shutdown()
    }
}

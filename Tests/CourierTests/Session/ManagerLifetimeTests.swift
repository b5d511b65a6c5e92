import Courier
import CourierTestServer
import Foundation
import Testing

@testable import CourierCore

/// A manager is an ordinary value: made per request and dropped without `shutdown()`, it
/// neither traps (AsyncHTTPClient asserts, in debug builds, that a client is shut down before
/// it is freed) nor leaves sockets open. `shutdown()` is still there, and still waits.
@Suite("Session: managers dropped without shutdown", .timeLimit(.minutes(3)))
struct ManagerLifetimeTests {
    /// Entries of /proc/self/fd: every descriptor the process holds, sockets included.
    static func openDescriptorCount() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
    }

    /// Waits, with a bound, for the descriptor count to come back to within `slack` of `start`,
    /// and returns the last count. Other suites run in parallel and open sockets of their own,
    /// which is what the slack and the wait absorb; a leak of one socket per manager is hundreds.
    static func descriptorsSettle(near start: Int, slack: Int = 64) async throws -> Int {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        var count = try openDescriptorCount()
        while count > start + slack && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            count = try openDescriptorCount()
        }
        return count
    }

    /// Waits, with a bound, until `object` has been freed.
    static func freed(_ object: Weak) async throws -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        while object.value != nil && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        return object.value == nil
    }

    final class Weak: @unchecked Sendable {
        // Written once before it is shared; the runtime makes reading a weak reference safe.
        weak var value: AnyObject?
        init(_ value: AnyObject) { self.value = value }
    }

    /// A transport that is not the shared one, so it has clients of its own to release.
    static func customTransport() -> AsyncHTTPClientTransport {
        var configuration = AsyncHTTPClientTransport.Configuration()
        configuration.maximumConnectionsPerHost = 2
        configuration.connectTimeout = .seconds(20)
        return AsyncHTTPClientTransport(configuration: configuration)
    }

    @Test func fiveHundredDefaultManagersUsedAndDroppedLeaveNoSockets() async throws {
        try await TestServerHarness.withServer { server in
            // One request first, so the shared transport's pool holds its connection at the start.
            let warm = try await HTTPSessionManager(baseURL: server.baseURL).get("get")
            #expect(warm.response.statusCode == 200)
            let start = try Self.openDescriptorCount()
            var failures = 0
            for round in 0..<500 {
                let manager = HTTPSessionManager(baseURL: server.baseURL)
                let response = try await manager.get("get", parameters: ["round": .int(round)])
                if response.response.statusCode != 200 { failures += 1 }
            }
            #expect(failures == 0)
            let settled = try await Self.descriptorsSettle(near: start)
            #expect(settled <= start + 64, "descriptors: \(start) at the start, \(settled) after 500 managers")
            // Every manager sent through the one shared transport, whose pool reused its connections.
            #expect(server.stats.connectionsAccepted <= 16)
        }
    }

    @Test func managersWithTheirOwnTransportsReleaseThemWhenDropped() async throws {
        try await TestServerHarness.withServer { server in
            let start = try Self.openDescriptorCount()
            var transports: [Weak] = []
            for round in 0..<200 {
                let transport = Self.customTransport()
                transports.append(Weak(transport))
                let manager = HTTPSessionManager(baseURL: server.baseURL, transport: transport)
                let response = try await manager.get("get", parameters: ["round": .int(round)])
                #expect(response.response.statusCode == 200)
            }
            for transport in transports {
                #expect(try await Self.freed(transport))
            }
            let settled = try await Self.descriptorsSettle(near: start)
            #expect(settled <= start + 64, "descriptors: \(start) at the start, \(settled) after 200 transports")
            // Each dropped transport's connection was closed, and the server saw the close.
            let stats = try await server.stats(when: { $0.connectionsOpen == 0 })
            #expect(stats.connectionsOpen == 0)
        }
    }

    @Test func aManagerDroppedMidRequestLetsTheRequestEnd() async throws {
        try await TestServerHarness.withServer { server in
            let transport = try await Self.requestOutlivingItsManager(server)
            // The task held the manager, and so the transport, only until it completed.
            #expect(try await Self.freed(transport))
        }
    }

    /// Starts a request, drops its manager and transport, and checks the request still completes;
    /// returns the transport, weakly, once nothing here holds it.
    static func requestOutlivingItsManager(_ server: TestServer) async throws -> Weak {
        var request = Request(url: server.url("/drip?numbytes=20&duration=1"))
        // The bound: past it the request fails with .timedOut rather than hanging.
        request.timeoutInterval = 60
        var transport: Weak?
        let task: SessionTask = {
            let custom = customTransport()
            transport = Weak(custom)
            return HTTPSessionManager(transport: custom).session.dataTask(with: request)
        }()
        task.resume()
        // Nothing here holds the manager or its transport now but the running task.
        let response = try await task.response()
        #expect(response.data.count == 20)
        #expect(task.state == .completed)
        return try #require(transport)
    }

    @Test func aTransportDroppedWhileABodyStreamsEndsTheBodyWithATypedErrorOrInFull() async throws {
        try await TestServerHarness.withServer { server in
            var request = Request(url: server.url("/drip?numbytes=20&duration=1"))
            request.timeoutInterval = 60
            let response: TransportResponse
            let transport: Weak
            do {
                let custom = Self.customTransport()
                transport = Weak(custom)
                response = try await custom.send(request, context: ExchangeContext())
            }
            // The transport is gone (the body does not keep it), so its clients are shutting down
            // under the body: the body ends, in full or with a CourierError, and never hangs.
            #expect(try await Self.freed(transport))
            var received = 0
            do {
                for try await chunk in response.body { received += chunk.readableBytes }
                #expect(received == 20)
            } catch let error as CourierError {
                #expect([.cancelled, .connectionFailed, .transportFailed].contains(error.code), "\(error)")
            }
        }
    }

    @Test func shutdownStillWaitsForTheTasksAndTheTransport() async throws {
        try await TestServerHarness.withServer { server in
            let transport = Self.customTransport()
            let manager = HTTPSessionManager(transport: transport)
            var request = Request(url: server.url("/drip?numbytes=10&duration=20"))
            request.timeoutInterval = 60
            let task = manager.session.dataTask(with: request)
            task.resume()
            try await manager.shutdown()
            // The manager's shutdown returned only once its task had ended.
            #expect(task.state == .completed)
            await expectCode(.cancelled) { try await task.response() }
            // The transport is the caller's: it still serves until it is shut down, and its
            // shutdown returns once its clients are closed.
            let still = try await transport.send(Request(url: server.url("/get")), context: ExchangeContext())
            #expect(still.head.statusCode == 200)
            for try await _ in still.body {}
            try await transport.shutdown()
            await expectCode(.transportFailed) {
                try await transport.send(Request(url: server.url("/get")), context: ExchangeContext())
            }
        }
    }

    @Test func theSharedTransportRefusesShutdownAndKeepsServing() async throws {
        try await TestServerHarness.withServer { server in
            await expectCode(.shutdownUnsupported) { try await AsyncHTTPClientTransport.shared.shutdown() }
            let manager = SessionManager()
            #expect(manager.transport as? AsyncHTTPClientTransport === AsyncHTTPClientTransport.shared)
            try await manager.shutdown()
            let response = try await SessionManager().data(for: Request(url: server.url("/get")))
            #expect(response.response.statusCode == 200)
        }
    }
}

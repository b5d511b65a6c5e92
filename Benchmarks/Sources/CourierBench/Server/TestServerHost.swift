import CourierTestServer
import Foundation

/// Courier's test server (target CourierTestServer) on an ephemeral loopback port.
struct TestServerHost {
    static let isAvailable = true
    private let server: TestServer

    /// Starts the server and writes its port to `portFile`; with no file, no server is started.
    static func start(portFile: String) async throws -> TestServerHost? {
        guard !portFile.isEmpty else { return nil }
        let server = try await TestServer.start(host: "127.0.0.1", port: 0)
        try String(server.port).write(toFile: portFile, atomically: true, encoding: .utf8)
        return TestServerHost(server: server)
    }

    func stop() async throws { try await server.shutdown() }
}

/// Courier's test server (target CourierTestServer), once it is on main.
struct TestServerHost {
    static let isAvailable = false
    static func start(portFile: String) async throws -> TestServerHost? { nil }
    func stop() async throws {}
}

import ArgumentParser
import CourierTestServer

/// `courier serve`: runs the httpbin-compatible test server until interrupted.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the httpbin-compatible test server until interrupted.", helpNames: [.long])

    @Option(name: .long, help: "The address to listen on (127.0.0.1, ::1, 0.0.0.0).")
    var host = "127.0.0.1"

    @Option(name: .long, help: "The port; 0 picks a free one.")
    var port = 8080

    @Flag(name: .long, help: "Do not log one line per request on stderr.")
    var quiet = false

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
    }

    func run() async throws {
        let server: TestServer
        do {
            server = try await TestServer.start(host: host, port: port, logRequests: !quiet)
        } catch {
            throw CLIError.failure("cannot listen on \(host):\(port): \(error)")
        }
        try StandardStreams.writeOut("courier serve: listening on \(server.baseURL.absoluteString) (Ctrl-C stops)\n")
        try await server.runUntilCancelled()
    }
}

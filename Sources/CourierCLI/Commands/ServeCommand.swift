import ArgumentParser

/// `courier serve`: runs the httpbin-compatible test server until interrupted.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the httpbin-compatible test server.", helpNames: [.long])

    @Option(name: .long, help: "The address to listen on (127.0.0.1, ::1, 0.0.0.0).")
    var host = "127.0.0.1"

    @Option(name: .long, help: "The port; 0 picks a free one.")
    var port = 8080

    func run() async throws {
        throw CLIError.failure("the test server is not in this build yet")
    }
}

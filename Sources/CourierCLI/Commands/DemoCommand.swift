import ArgumentParser

/// `courier demo`: a short tour of Courier against an in-process test server.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo", abstract: "Walk through Courier's features against a local test server.", helpNames: [.long])

    func run() async throws {
        throw CLIError.failure("the demo needs the test server and session layer, which this build does not have yet")
    }
}

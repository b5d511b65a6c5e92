import ArgumentParser
import CourierTestServer
import Foundation

/// `courier demo`: a short tour of Courier against an in-process test server on an ephemeral
/// loopback port. Every step checks what the server received and fails the demo when it differs.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo", abstract: "Walk through Courier's features against a local test server.",
        helpNames: [.long])

    @Option(name: .long, help: "Size of the generated multipart upload, in megabytes (10^6 bytes).")
    var uploadMegabytes = 200

    @Option(name: .long, help: "Size of the download that is cut and resumed, in megabytes.")
    var downloadMegabytes = 64

    @Option(name: .long, help: "Progress bars on stderr: auto, always or never.")
    var progress = "auto"

    func validate() throws {
        guard (1...4000).contains(uploadMegabytes), (1...4000).contains(downloadMegabytes) else {
            throw ValidationError("sizes must be between 1 and 4000 megabytes")
        }
    }

    func run() async throws {
        let showProgress = try ProgressOption.parse(progress).enabled(
            stderrIsTerminal: Terminal.current().stderrIsTerminal)
        let server: TestServer
        do {
            server = try await TestServer.start(host: "127.0.0.1", port: 0)
        } catch {
            throw CLIError.failure("cannot start the test server on 127.0.0.1: \(error)")
        }
        let session = try SessionFactory.make()
        let tour = DemoTour(
            server: server, session: session.manager, showProgress: showProgress,
            uploadBytes: Int64(uploadMegabytes) * 1_000_000, downloadBytes: Int64(downloadMegabytes) * 1_000_000)
        let started = Date()
        do {
            try await tour.run()
        } catch {
            await session.shutdown()
            try? await server.shutdown()
            throw Exchange.cliError(for: error)
        }
        await session.shutdown()
        try? await server.shutdown()
        try StandardStreams.writeOut(
            "\nAll \(DemoTour.stepCount) steps passed in \(String(format: "%.1f", Date().timeIntervalSince(started))) s.\n"
        )
    }
}

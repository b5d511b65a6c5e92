import Courier
import Foundation

/// One request sent through the library, with its output, progress and downloads.
struct Exchange: Sendable {
    var request: Request
    var printer: MessagePrinter
    var output: OutputOptions
    var follow: Bool
    var maxRedirects: Int
    var verify: String
    var chunked: Bool
    var checkStatus: Bool
    var download: Bool
    var outputPath: String?
    var resume: Bool
    var showProgress: Bool

    /// Sends the request and prints the exchange.
    /// - Returns: the exit status (not success only under `--check-status`).
    /// - Throws: ``CLIError`` with the exit code for connection failures and timeouts.
    func run() async throws -> ExitStatus {
        throw CLIError.failure("sending requests needs the session layer, which this build does not have yet")
    }
}

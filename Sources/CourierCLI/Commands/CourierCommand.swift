import ArgumentParser
import Courier
import Foundation

/// The `courier` root command: an httpie-style request by default, plus `serve` and `demo`.
struct CourierCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "An httpie-compatible HTTP client built on the Courier library.",
        version: "0.2.0",
        subcommands: [RequestCommand.self, ServeCommand.self, DemoCommand.self],
        defaultSubcommand: RequestCommand.self,
        // `-h` means --headers, as in httpie; help is `--help` only.
        helpNames: [.long]
    )

    /// Parses the command line and runs it, turning every failure into one line on stderr and
    /// httpie's exit codes (see ``ExitStatus``).
    static func runMain() async -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        if RootHelp.isRequested(Array(CommandLine.arguments.dropFirst())) {
            StandardStreams.writeOutIgnoringErrors(RootHelp.text())
            return 0
        }
        let command: ParsableCommand
        do {
            command = try parseAsRoot(ResumableOption.rewriting(Array(CommandLine.arguments.dropFirst())))
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                // --help and --version: the parser prints them and exits 0.
                exit(withError: error)
            }
            StandardStreams.writeError("courier: error: \(oneLine(message(for: error)))\n")
            return usageExitCode
        }
        do {
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
            return 0
        } catch let exit as CommandExit {
            return exit.code
        } catch let error as CLIError {
            StandardStreams.writeError("courier: error: \(oneLine(error.message))\n")
            return error.exitCode
        } catch {
            if exitCode(for: error) == .success { exit(withError: error) }
            StandardStreams.writeError("courier: error: \(oneLine(message(for: error)))\n")
            return usageExitCode
        }
    }

    /// The message on one line, with any password in a quoted URL redacted: errors end up in
    /// CI logs, and a URL the user typed may carry credentials.
    private static func oneLine(_ text: String) -> String {
        HeaderRedaction.redactingURLPasswords(in: text).split(whereSeparator: \.isNewline).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        .filter { !$0.isEmpty }.joined(separator: " ")
    }
}

/// Thrown by a command to exit with a code after it has printed everything (`--check-status`).
struct CommandExit: Error, Sendable {
    var code: Int32
}

/// A failure the CLI reports as one line on stderr before exiting with ``exitCode``.
///
/// Carries the original token of a bad request item or option so the message can quote it.
struct CLIError: Error, Sendable, CustomStringConvertible {
    /// The sentence printed after `courier: error: `.
    var message: String
    /// The process exit code.
    var exitCode: Int32

    /// A usage error: bad option, bad request item, unreadable file named on the command line.
    static func usage(_ message: String) -> CLIError { CLIError(message: message, exitCode: usageExitCode) }

    /// A runtime failure with the given status.
    static func failure(_ message: String, _ status: ExitStatus = .error) -> CLIError {
        CLIError(message: message, exitCode: status.rawValue)
    }

    var description: String { message }
}

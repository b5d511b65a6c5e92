/// The process exit codes, the same numbers httpie uses so that scripts written for `http` keep working.
enum ExitStatus: Int32, Sendable {
    /// The request was sent and a response received (any status, unless `--check-status`).
    case success = 0
    /// Any other failure: a connection error, a bad file, a TLS failure.
    case error = 1
    /// The request timed out (`--timeout`).
    case timeout = 2
    /// `--check-status` and the final response was 3xx (only without `--follow`).
    case redirection = 3
    /// `--check-status` and the final response was 4xx.
    case clientError = 4
    /// `--check-status` and the final response was 5xx.
    case serverError = 5
    /// More redirects than `--max-redirects` allows.
    case tooManyRedirects = 6
    /// Interrupted by the user (SIGINT, 128 + 2).
    case interrupted = 130
    /// stdout was closed before the body was written (a broken pipe): the number a shell gives
    /// a process killed by SIGPIPE (128 + 13).
    case brokenPipe = 141
    /// Stopped by SIGTERM (128 + 15).
    case terminated = 143

    /// The status that `--check-status` reports for `statusCode`.
    static func checking(statusCode: Int, followedRedirects: Bool) -> ExitStatus {
        switch statusCode {
        case 300..<400: return followedRedirects ? .success : .redirection
        case 400..<500: return .clientError
        case 500..<600: return .serverError
        default: return .success
        }
    }
}

/// The exit code for errors in the command line itself (bad option, bad request item, missing
/// file): 1, as httpie 3 exits for them.
let usageExitCode: Int32 = 1

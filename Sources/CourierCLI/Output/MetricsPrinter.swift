import Courier
import Foundation
import NIOConcurrencyHelpers

/// `--meta` and `-v`: where the time went, as httpie's metadata section and curl's `-w`
/// timings show it, from the task's ``TaskMetrics``.
///
/// One line for the whole exchange, then one per attempt (each redirect hop and retry) with its
/// status, HTTP version, connection (new or reused, the peer's address) and timings measured
/// from the task's start: request sent, first response byte, body end (for a printed body, which
/// streams, when the CLI finished writing it). What the transport could not tell is left out
/// rather than guessed.
struct MetricsPrinter {
    /// The section for `metrics`; `finished` is when the CLI finished writing the body (a
    /// streamed response's metrics end at its head).
    func text(for metrics: TaskMetrics, finished: ContinuousClock.Instant) -> String {
        let start = metrics.taskStart
        let total = start.duration(to: max(finished, metrics.taskEnd))
        var lines = ["Elapsed time: \(Self.seconds(total))s"]
        for (index, attempt) in metrics.attempts.enumerated() {
            var summary = "Attempt \(index + 1): \(attempt.method.rawValue) \(Self.redacted(attempt.url))"
            if attempt.reason != .initial { summary += " (\(attempt.reason))" }
            if let status = attempt.statusCode { summary += " → \(status)" }
            if let code = attempt.errorCode { summary += " failed: \(code)" }
            lines.append(summary)
            var connection: [String] = []
            if let version = attempt.httpVersion { connection.append(version.description) }
            if let reused = attempt.reusedConnection {
                connection.append(reused ? "reused connection" : "new connection")
            }
            if let remote = attempt.remoteAddress { connection.append("remote \(remote)") }
            if !connection.isEmpty { lines.append("  connection: " + connection.joined(separator: ", ")) }
            var timings = ["start \(Self.milliseconds(start.duration(to: attempt.requestStart)))"]
            if let sent = attempt.requestBodySent ?? attempt.requestHeadSent {
                timings.append("request sent \(Self.milliseconds(start.duration(to: sent)))")
            }
            if let head = attempt.responseHeadReceived {
                timings.append("first byte \(Self.milliseconds(start.duration(to: head)))")
            }
            if let end = attempt.responseBodyComplete {
                timings.append("body end \(Self.milliseconds(start.duration(to: end)))")
            } else if index == metrics.attempts.count - 1 {
                // A streamed body (every printed one) ends when the CLI has written it.
                timings.append("output done \(Self.milliseconds(total))")
            }
            lines.append("  time: " + timings.joined(separator: ", "))
            var bytes = ["sent \(attempt.bytesSent) B"]
            if let received = attempt.bytesReceived
                ?? (attempt.responseBodyComplete != nil ? attempt.decodedBytesReceived : nil)
            {
                bytes.append("received \(received) B")
                if received != attempt.decodedBytesReceived {
                    bytes.append("decoded \(attempt.decodedBytesReceived) B")
                }
            }
            lines.append("  bytes: " + bytes.joined(separator: ", "))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func seconds(_ duration: Duration) -> String {
        String(format: "%.6f", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    static func milliseconds(_ duration: Duration) -> String {
        String(
            format: "%.3f ms",
            Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15)
    }

    /// The URL without its password (a user name stays, as in the CLI's other messages).
    static func redacted(_ url: URL) -> String {
        HeaderRedaction().redacted(url)
    }
}

/// Keeps the last completed task's metrics of the command's session, for ``MetricsPrinter``:
/// the CLI runs one exchange per process, so one capture serves it.
final class MetricsCapture: EventMonitor, Sendable {
    /// The process's capture, installed on the CLI's session.
    static let shared = MetricsCapture()

    private let last = NIOLockedValueBox<TaskMetrics?>(nil)

    /// The metrics of the last task that completed with a response.
    var latest: TaskMetrics? { last.withLockedValue { $0 } }

    func task(_ task: SessionTask, didCompleteWith result: Result<SessionResponse, CourierError>) {
        if case .success(let response) = result { last.withLockedValue { $0 = response.metrics } }
    }
}

/// Why an exchange got no response head, when its transport can tell that the request may go
/// out again on another connection (``CourierError/unansweredExchange``): the server never
/// processed it, or the connection it rode was being retired.
///
/// Servers retire connections all the time: nginx after `keepalive_requests` requests, load
/// balancers on deploys, any server after an idle timeout. Over HTTP/2 a server sends GOAWAY
/// naming the last stream it will process, and closes the streams above it unprocessed
/// (RFC 9113 §6.8); one that cannot take a stream now resets it with `REFUSED_STREAM`, which
/// promises that nothing of it was processed (RFC 9113 §8.7). Over HTTP/1.1 a pooled connection
/// may turn out to be closed as the request is written to it.
///
/// A transport reports the reason; the session alone decides to resend (a transport resends
/// nothing): a request whose body can be made again goes out again at once, without asking the
/// retrier, within the bounds below, so that a server that refuses everything ends in its own
/// error rather than a loop.
public enum UnansweredExchange: Sendable, Hashable {
    /// Nothing was written: a pooled connection found closed, or a request handed to a
    /// connection that a GOAWAY was closing.
    case unsent
    /// Reset with HTTP/2 `REFUSED_STREAM`, or above the last-stream-id of a GOAWAY the server
    /// sent: never processed.
    case refused
    /// Closed with HTTP/2 `CANCEL` otherwise: the server may have processed it.
    case cancelled
    /// The connection closed, or was reset, before the response head arrived: the server may
    /// have processed the request.
    case connectionClosed

    /// How many times one request is sent again after the server may have seen it.
    public static let maximumResends = 4
    /// How many times one request is sent again after nothing of it was written: this costs the
    /// server nothing, and under heavy retirement a pool can hand a request to a closing
    /// connection several times in a row.
    public static let maximumUnsentResends = 16
    /// How many of ``maximumResends`` may follow a closed connection: one, as curl and Go's
    /// transport retry a request whose connection died, so that a server that closes on a request
    /// (rather than retiring a connection) sees it twice, not five times.
    public static let maximumResendsAfterClose = 1

    /// Whether a request with `method` may go out again: always when nothing was processed, and
    /// for an idempotent method (RFC 9110 §9.2.2) when something may have been.
    public func allowsResend(of method: HTTPMethod) -> Bool {
        switch self {
        case .unsent, .refused: return true
        case .cancelled, .connectionClosed: return method.isIdempotent
        }
    }
}

/// What one task may still spend on resends of unanswered exchanges (``UnansweredExchange``'s bounds).
struct ResendBudget: Sendable {
    /// Resends made so far, of every kind.
    private(set) var spent = 0
    private var afterUnsent = 0
    private var afterClose = 0

    /// Counts a resend for `reason` and returns the wait before it (none for the first, then 1,
    /// 2, 4 ms and so on up to 64 ms, so that the pool learns that the connection is going away),
    /// or nil when its bound is reached.
    mutating func spend(on reason: UnansweredExchange) -> Duration? {
        switch reason {
        case .unsent:
            guard afterUnsent < UnansweredExchange.maximumUnsentResends else { return nil }
            afterUnsent += 1
        case .connectionClosed:
            guard afterClose < UnansweredExchange.maximumResendsAfterClose,
                spent - afterUnsent < UnansweredExchange.maximumResends
            else { return nil }
            afterClose += 1
        case .refused, .cancelled:
            guard spent - afterUnsent < UnansweredExchange.maximumResends else { return nil }
        }
        spent += 1
        return spent <= 1 ? .zero : .milliseconds(1 << min(spent - 2, 6))
    }
}

import NIOCore

/// A request's whole deadline: when it passes, and the interval it came from (for messages).
///
/// Worked out in one place for the session (a task's deadline) and for a transport called on its
/// own (``ExchangeContext/init(for:defaultTimeout:uploadProgress:cancellation:)``): the request's
/// ``Request/timeoutInterval``, else the transport's default; nil is no deadline at all, never a
/// far-off one.
struct RequestDeadline: Sendable, Equatable {
    var instant: NIODeadline
    var seconds: Double

    /// A deadline `seconds` from now; nil for none (nil, NaN, infinite or absurdly long
    /// intervals), now for a negative one.
    init?(seconds interval: Double?, now: NIODeadline = .now()) {
        guard let interval, interval.isFinite, interval < 1e9 else { return nil }
        seconds = max(0, interval)
        instant = now + .nanoseconds(Int64(seconds * 1_000_000_000))
    }

    /// The request's own deadline, else `defaultSeconds` (the transport's); nil for neither.
    init?(for request: Request, defaultSeconds: Double?, now: NIODeadline = .now()) {
        guard
            let deadline = RequestDeadline(seconds: request.timeoutInterval, now: now)
                ?? RequestDeadline(seconds: defaultSeconds, now: now)
        else { return nil }
        self = deadline
    }
}

import NIOCore

/// A request's whole deadline: when it passes, and the interval it came from (for messages).
///
/// Worked out in one place, for a task: the request's ``Request/timeoutInterval``, else the
/// transport's default; nil is no deadline at all, never a far-off one.
struct RequestDeadline: Sendable, Equatable {
    var instant: NIODeadline
    var seconds: Double

    /// A deadline `seconds` from `now` (the clock is read only when there is an interval); nil
    /// for none (nil, NaN, infinite or absurdly long intervals), now for a negative one.
    init?(seconds interval: Double?, now: NIODeadline? = nil) {
        guard let interval, interval.isFinite, interval < 1e9 else { return nil }
        seconds = max(0, interval)
        instant = (now ?? .now()) + .nanoseconds(Int64(seconds * 1_000_000_000))
    }

    /// `interval` (a request's own ``Request/timeoutInterval``), else `defaultSeconds` (the
    /// transport's); nil for neither. It takes the interval rather than the request: a request
    /// read from a task to pass here would be copied whole.
    init?(interval: Double?, defaultSeconds: Double?) {
        guard let deadline = RequestDeadline(seconds: interval) ?? RequestDeadline(seconds: defaultSeconds) else {
            return nil
        }
        self = deadline
    }
}

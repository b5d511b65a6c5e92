import NIOCore

/// A request's whole deadline: when it passes, and the interval it came from (for messages).
///
/// Worked out in one place, for a task: from the request's ``Request/timeoutInterval``, else from
/// the transport's default; nil is no deadline at all, never a far-off one.
struct RequestDeadline: Sendable, Equatable {
    var instant: NIODeadline
    var seconds: Double

    /// A deadline `seconds` (a request's own ``Request/timeoutInterval``), else `fallback` (the
    /// transport's default), from `now` (the clock is read only when there is an interval); nil
    /// for none (nil, NaN, infinite or absurdly long intervals), now for a negative one.
    init?(seconds interval: Double?, orElse fallback: Double? = nil, now: NIODeadline? = nil) {
        func usable(_ interval: Double?) -> Double? { interval.flatMap { $0.isFinite && $0 < 1e9 ? $0 : nil } }
        guard let interval = usable(interval) ?? usable(fallback) else { return nil }
        seconds = max(0, interval)
        instant = (now ?? .now()) + .nanoseconds(Int64(seconds * 1_000_000_000))
    }
}

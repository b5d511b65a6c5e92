/// What one task does differently from its ``SessionManager``: its own redirect limit and its
/// own retrier, for a request that needs other rules than the rest (an OpenAPI operation, say).
///
/// The request's own deadline is already per request (``Request/timeoutInterval``). The retrier
/// is asked first; when it declines, the manager's interceptor is asked, as Alamofire combines a
/// request's interceptor with its session's, so a manager-wide `AuthenticationInterceptor`
/// keeps refreshing credentials for such a task.
public struct TaskOverrides: Sendable {
    /// The redirect rules for this task; nil uses the manager's ``SessionManager/Configuration/redirectPolicy``.
    public var redirectPolicy: RedirectPolicy?
    /// Asked before the manager's interceptor whether a failed attempt is sent again; nil asks
    /// the manager's alone.
    public var retrier: (any RequestRetrier)?
    /// How many response body bytes the transport may read ahead of this task's reader (see
    /// ``ExchangeContext/readAheadLimit``); nil asks for ``downloadReadAheadLimit``
    /// when the task writes a file (raised through ``TransportResponse/raiseReadAhead`` when a
    /// did-receive-response hook makes it a download) and the transport's own limit otherwise.
    /// A stream whose reader writes to a file or a pipe gains from the download's limit too.
    public var readAheadLimit: Int?

    /// The read-ahead a task that writes its body to a file gets unless it asks for another:
    /// 8 MiB. With the transport's default of 1 MiB, a 1 GiB download to tmpfs went 1.14 GB/s
    /// against 1.27 GB/s with 8 MiB (median of 8 alternated runs each on a 2-core machine, the C
    /// client that `recv`s and `write`s at 1.07 GB/s in the same rounds): the event loop stops
    /// after every read until the writer takes the chunk, and each stop costs two wake-ups.
    public static let downloadReadAheadLimit = 8 << 20

    /// Makes overrides; with no arguments the task follows its manager's rules.
    public init(
        redirectPolicy: RedirectPolicy? = nil, retrier: (any RequestRetrier)? = nil, readAheadLimit: Int? = nil
    ) {
        self.redirectPolicy = redirectPolicy
        self.retrier = retrier
        self.readAheadLimit = readAheadLimit
    }
}

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

    /// Makes overrides; with no arguments the task follows its manager's rules.
    public init(redirectPolicy: RedirectPolicy? = nil, retrier: (any RequestRetrier)? = nil) {
        self.redirectPolicy = redirectPolicy
        self.retrier = retrier
    }
}

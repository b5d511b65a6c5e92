/// Changes a request before each attempt (adds a token, signs it), as Alamofire's RequestAdapter.
public protocol RequestAdapter: Sendable {
    /// Returns the request to send.
    /// - Throws: any error to fail the task: a ``CourierError`` as it is, any other error wrapped
    ///   as `.requestAdaptationFailed`.
    func adapt(_ request: Request) async throws -> Request
}

/// Decides whether a failed attempt is sent again, as Alamofire's RequestRetrier.
public protocol RequestRetrier: Sendable {
    /// Called when an attempt failed below HTTP (`error` set, `response` nil) or ended with a
    /// status of 400 or more (`response` set, `error` nil). `retryCount` counts retries so far.
    func retry(_ request: Request, response: ResponseHead?, error: CourierError?, retryCount: Int) async
        -> RetryDecision
}

/// Both halves; a type that only needs one gets the other's pass-through default.
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

extension RequestInterceptor {
    public func adapt(_ request: Request) async throws -> Request { request }
    public func retry(_ request: Request, response: ResponseHead?, error: CourierError?, retryCount: Int) async
        -> RetryDecision
    { .doNotRetry }
}

/// A retrier's answer.
public enum RetryDecision: Sendable, Equatable {
    /// Send again now.
    case retry
    /// Send again after the delay (the session's sleeper waits, so tests can skip the wait).
    case retryWithDelay(Duration)
    /// Deliver the failure (or the response) as it is.
    case doNotRetry
}

/// Sleeps for a retry delay. The default is `Task.sleep`; tests inject one that records the
/// delay and returns at once. Must throw `CancellationError` when the task is cancelled.
public typealias RetrySleeper = @Sendable (Duration) async throws -> Void

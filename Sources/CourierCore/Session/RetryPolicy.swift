/// Retries idempotent requests that failed for a transient reason, with exponential backoff
/// (Alamofire's RetryPolicy and its defaults).
///
/// Attempt `n` (0-based) waits `exponentialBackoffScale × exponentialBackoffBase^n` seconds:
/// 0.5 s, then 1 s with the defaults, and gives up after ``retryLimit`` retries.
public struct RetryPolicy: RequestInterceptor, Hashable {
    /// The most retries per task (the first attempt not counted). Default 2.
    public var retryLimit: Int
    /// Growth factor of the delay. Default 2.
    public var exponentialBackoffBase: Int
    /// The first delay, in seconds. Default 0.5.
    public var exponentialBackoffScale: Double
    /// Methods that may be sent again (RFC 9110 idempotent ones by default).
    public var retryableHTTPMethods: Set<HTTPMethod>
    /// Statuses worth another try. Default 408, 500, 502, 503, 504.
    public var retryableHTTPStatusCodes: Set<Int>
    /// Transport failures worth another try. Default connection failures and timeouts.
    public var retryableErrorCodes: Set<CourierError.Code>

    /// Alamofire's default idempotent methods.
    public static let defaultRetryableHTTPMethods: Set<HTTPMethod> = [.delete, .get, .head, .options, .put, .trace]
    /// Alamofire's default retryable statuses.
    public static let defaultRetryableHTTPStatusCodes: Set<Int> = [408, 500, 502, 503, 504]
    /// Failures that are usually transient.
    public static let defaultRetryableErrorCodes: Set<CourierError.Code> = [.connectionFailed, .timedOut]

    /// Makes a policy; every argument defaults to Alamofire's value.
    public init(
        retryLimit: Int = 2,
        exponentialBackoffBase: Int = 2,
        exponentialBackoffScale: Double = 0.5,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
        retryableErrorCodes: Set<CourierError.Code> = RetryPolicy.defaultRetryableErrorCodes
    ) {
        self.retryLimit = retryLimit
        self.exponentialBackoffBase = exponentialBackoffBase
        self.exponentialBackoffScale = exponentialBackoffScale
        self.retryableHTTPMethods = retryableHTTPMethods
        self.retryableHTTPStatusCodes = retryableHTTPStatusCodes
        self.retryableErrorCodes = retryableErrorCodes
    }

    /// The delay before retry number `retryCount + 1`.
    public func delay(forRetryCount retryCount: Int) -> Duration {
        var factor = 1.0
        for _ in 0..<max(0, retryCount) { factor *= Double(exponentialBackoffBase) }
        return .milliseconds(Int64((exponentialBackoffScale * factor * 1000).rounded()))
    }

    /// Retries with backoff when the method is retryable, the limit is not reached, and the
    /// status or the error code is in the retryable sets.
    public func retry(_ request: Request, response: ResponseHead?, error: CourierError?, retryCount: Int) async
        -> RetryDecision
    {
        guard retryCount < retryLimit, retryableHTTPMethods.contains(request.method) else { return .doNotRetry }
        let transient =
            response.map { retryableHTTPStatusCodes.contains($0.statusCode) }
            ?? error.map { retryableErrorCodes.contains($0.code) } ?? false
        return transient ? .retryWithDelay(delay(forRetryCount: retryCount)) : .doNotRetry
    }
}

/// The codes of ``AuthenticationInterceptor``: a credential that is missing, could not be
/// refreshed, or keeps being refused.
extension CourierError.Code {
    /// The interceptor has no credential to apply (it was made or set with nil).
    ///
    /// Thrown by ``AuthenticationInterceptor/adapt(_:)``; the task fails with it.
    public static let authenticationCredentialMissing = CourierError.Code("authenticationCredentialMissing")

    /// The ``Authenticator``'s refresh threw; its error is the ``CourierError/underlyingError``.
    ///
    /// Thrown by ``AuthenticationInterceptor`` to every request that waited for that refresh;
    /// each task fails with it.
    public static let authenticationRefreshFailed = CourierError.Code("authenticationRefreshFailed")

    /// More refreshes than the ``AuthenticationInterceptor/RefreshWindow`` allows: new
    /// credentials are refused again and again, so the interceptor stops refreshing.
    ///
    /// Thrown by ``AuthenticationInterceptor``; the task fails with it.
    public static let authenticationRefreshLoop = CourierError.Code("authenticationRefreshLoop")
}

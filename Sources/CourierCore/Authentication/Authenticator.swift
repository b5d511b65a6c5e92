/// A credential an ``Authenticator`` applies and refreshes (a token and its expiry, say).
public protocol AuthenticationCredential: Sendable {
    /// True when the credential should be refreshed before it is used (it expires soon or has
    /// expired); ``AuthenticationInterceptor`` then refreshes it before sending a request.
    var requiresRefresh: Bool { get }
}

/// The caller's knowledge of one authentication scheme, as Alamofire's `Authenticator`: how a
/// credential goes into a request, how it is refreshed, and how to read a refusal.
/// ``AuthenticationInterceptor`` does the coordination (one refresh at a time, retries).
public protocol Authenticator: Sendable {
    /// The credential type.
    associatedtype Credential: AuthenticationCredential

    /// Puts `credential` into `request` (an `Authorization` field, a signature).
    /// - Throws: any error to fail the request (a ``CourierError`` arrives as it is, any other error as `.requestAdaptationFailed`).
    func apply(_ credential: Credential, to request: inout Request) throws

    /// Gets a new credential to replace `credential` (calls a token endpoint, say). The
    /// interceptor calls it once however many requests are waiting for it.
    /// - Throws: any error when no new credential can be had; every waiting request then fails
    ///   with `.authenticationRefreshFailed` carrying it.
    func refresh(_ credential: Credential) async throws -> Credential

    /// Whether `response` to `request` says its credential was refused (typically a 401).
    /// `error` is the attempt's error, if any (nil when the attempt ended with a status).
    func didRequest(_ request: Request, with response: ResponseHead, failDueToAuthenticationError error: (any Error)?)
        -> Bool

    /// Whether `request` carries `credential` (not an older one). A refused request that
    /// carries an older credential is only retried with the current one, not refreshed again.
    func isRequest(_ request: Request, authenticatedWith credential: Credential) -> Bool
}

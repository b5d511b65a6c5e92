/// The codes of the transport layer: one exchange with a server, below HTTP semantics.
///
/// A custom ``Transport`` reports its failures with these codes (it may throw any other error;
/// the session then reports it as `.transportFailed` around it). The session also uses
/// `.cancelled` and `.timedOut` for a task that a caller cancelled or that ran out of time.
extension CourierError.Code {
    /// The request was cancelled (by the caller, a task handle, or the calling Swift `Task`).
    ///
    /// Thrown by the transport when an exchange is cancelled, and by the session for a task
    /// cancelled before or during a transfer or a retry delay.
    public static let cancelled = CourierError.Code("cancelled")

    /// A connect, read or whole-request deadline passed.
    ///
    /// Thrown by the transport for AsyncHTTPClient's timeouts, and by the session when a task's
    /// deadline passes.
    public static let timedOut = CourierError.Code("timedOut")

    /// The connection could not be made or broke before the response was complete.
    ///
    /// Thrown by the transport (refused or reset connections, a server closing mid-response, an
    /// HTTP/2 stream reset).
    public static let connectionFailed = CourierError.Code("connectionFailed")

    /// Any other failure below HTTP (TLS, protocol errors, a shut-down transport).
    ///
    /// Thrown by the transport, and by the session around an error of a custom transport that is
    /// not a ``CourierError`` (kept as the ``CourierError/underlyingError``).
    public static let transportFailed = CourierError.Code("transportFailed")

    /// The URL's scheme is not one the transport speaks (AsyncHTTPClient: http, https and the
    /// unix-socket forms), or the URL names no host to connect to.
    ///
    /// Thrown by `AsyncHTTPClientTransport` before any I/O.
    public static let unsupportedScheme = CourierError.Code("unsupportedScheme")

    /// A compressed response body expanded past
    /// `AsyncHTTPClientTransport.Configuration.decompressionRatioLimit` decoded bytes per
    /// encoded byte; the exchange was stopped.
    ///
    /// Thrown by `AsyncHTTPClientTransport` while it decodes a gzip or deflate body.
    public static let decompressionLimitExceeded = CourierError.Code("decompressionLimitExceeded")

    /// A response body named gzip or deflate in `Content-Encoding` is not valid data in that
    /// coding: corrupt, cut short, or followed by stray bytes.
    ///
    /// Thrown by `AsyncHTTPClientTransport` while it decodes the body.
    public static let contentDecodingFailed = CourierError.Code("contentDecodingFailed")

    /// `AsyncHTTPClientTransport.shutdown()` was called on `AsyncHTTPClientTransport.shared`,
    /// which stays up for the life of the process.
    public static let shutdownUnsupported = CourierError.Code("shutdownUnsupported")
}

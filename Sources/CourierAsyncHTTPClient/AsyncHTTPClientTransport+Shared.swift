import CourierCore

extension AsyncHTTPClientTransport {
    /// One transport for the whole process, with the default ``Configuration``: what a
    /// `SessionManager` uses when it is given no transport.
    ///
    /// It is never shut down and needs no ``shutdown()``, so managers that use it can be
    /// dropped at any time, one per request if need be, and still share its connection pools.
    /// Its ``shutdown()`` throws `.shutdownUnsupported` instead of closing what other managers
    /// are using (AsyncHTTPClient's `HTTPClient.shared` refuses in the same way).
    public static let shared = AsyncHTTPClientTransport(configuration: Configuration(), isShared: true)
}

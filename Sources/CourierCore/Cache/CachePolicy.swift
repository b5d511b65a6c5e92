/// How one request uses the session's ``HTTPCache`` (``SessionManager/Configuration/cache``);
/// set it as ``Request/cachePolicy``. Without a cache every policy sends the request.
///
/// The request's own `Cache-Control` directives apply under every policy that reads the cache
/// (RFC 9111 §5.2.1): `no-cache` and `max-age=0` revalidate, `max-stale` accepts a stale
/// response, `no-store` neither reads nor stores, and `only-if-cached` answers a miss with a
/// `504 Gateway Timeout` response, as the RFC says. Whatever the policy, a non-error response to
/// an unsafe method (POST, PUT, DELETE, PATCH, …) removes the stored responses for its URL and
/// for its `Location` and `Content-Location` on the same origin (§4.4).
public enum CachePolicy: Sendable, Hashable {
    /// ``useCache`` for data and upload tasks; ``bypass`` for downloads and streams, whose
    /// bodies are usually too big to keep or are read as they arrive. The default.
    case automatic
    /// RFC 9111 as written: a fresh stored response answers without the network, a stale one
    /// is revalidated (`If-None-Match`/`If-Modified-Since`; a 304 refreshes it and the caller
    /// gets the stored body as a 200), and a cacheable response is stored. For downloads and
    /// streams too.
    case useCache
    /// Always the network, as `URLRequest`'s `reloadIgnoringLocalCacheData`; a cacheable
    /// response is stored, replacing what was there.
    case reloadIgnoringCache
    /// Neither read nor stored.
    case bypass
    /// Only a stored response that may be used without the network (fresh, or stale within
    /// the request's `max-stale`); otherwise the task fails with ``CourierError/Code/cacheMiss``
    /// and nothing is sent. A typed error rather than RFC 9111's 504, because that is what a
    /// `URLCache` user expects of `returnCacheDataDontLoad`; send `Cache-Control:
    /// only-if-cached` for the 504.
    case onlyIfCached
}

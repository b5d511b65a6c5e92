/// The codes of ``HTTPCache``.
extension CourierError.Code {
    /// A request whose ``Request/cachePolicy`` is ``CachePolicy/onlyIfCached`` found no stored
    /// response it may be answered with (none, or only a stale one). Nothing was sent.
    ///
    /// Thrown by a task of a ``SessionManager`` whose ``SessionManager/Configuration/cache`` is set.
    public static let cacheMiss = CourierError.Code("cacheMiss")

    /// The directory given to an ``HTTPCache`` cannot be made or listed.
    ///
    /// Thrown by ``HTTPCache/init(memoryCapacity:directory:diskCapacity:clock:)``.
    public static let cacheDirectoryUnusable = CourierError.Code("cacheDirectoryUnusable")
}

import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// How the transport's `URLSession` is set up.
    ///
    /// Whatever is set here, the session's own cookie storage, credential storage and cache are
    /// off and it follows no redirects: the ``Courier/SessionManager`` above the transport applies
    /// its own policies for all four, so they are never applied twice.
    public struct Configuration: Sendable {
        /// Longest wait for the next byte of a response (URLSession's `timeoutIntervalForRequest`),
        /// in whole seconds, at least one; default 60.
        public var readTimeout: Duration = .seconds(60)
        /// Deadline for a whole exchange when the request sets none; nil means none.
        public var requestTimeout: Duration?
        /// Connections kept per host (URLSession's `httpMaximumConnectionsPerHost`); default 8.
        public var maximumConnectionsPerHost: Int = 8
        /// Bodies that are neither bytes in memory nor one whole file (file regions, forms,
        /// streams) are read into memory and sent from there when their length is known and at
        /// most this; others are first copied to a temporary file and sent from it (see the
        /// README, "URLSession transport", for why a stream cannot carry them); default 4 MiB.
        public var inMemoryBodyLimit: Int = 4 << 20
        /// Response bytes held for a slow reader; past it the task is suspended on Apple
        /// platforms. FoundationNetworking cannot pause a transfer, so on Linux this only bounds
        /// the read-ahead that is *reported*, not memory (see ``URLSessionTransport``).
        public var bufferedResponseLimit: Int = 1 << 20
        /// Where bodies that must be copied before sending are written; the system's temporary
        /// directory by default.
        public var temporaryDirectory: URL = FileManager.default.temporaryDirectory

        /// The defaults: 60 s read timeout, no whole-request deadline, 8 connections per host.
        public init() {}

        /// `readTimeout` as URLSession takes it: whole seconds (FoundationNetworking truncates
        /// fractions, and 0 would mean no limit), at least one.
        var readTimeoutSeconds: TimeInterval {
            let (seconds, attoseconds) = readTimeout.components
            return TimeInterval(max(1, seconds + (attoseconds > 0 ? 1 : 0)))
        }

        /// The `URLSessionConfiguration` every session of the transport is made from.
        func makeSessionConfiguration() -> URLSessionConfiguration {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpCookieStorage = nil
            configuration.httpShouldSetCookies = false
            configuration.httpCookieAcceptPolicy = .never
            configuration.urlCache = nil
            configuration.urlCredentialStorage = nil
            configuration.requestCachePolicy = .reloadIgnoringLocalAndRemoteCacheData
            configuration.timeoutIntervalForRequest = readTimeoutSeconds
            // No whole-exchange limit here: the caller's timer owns the deadline (ExchangeContext).
            configuration.timeoutIntervalForResource = 7 * 24 * 3600
            configuration.httpMaximumConnectionsPerHost = max(1, maximumConnectionsPerHost)
            return configuration
        }
    }
}

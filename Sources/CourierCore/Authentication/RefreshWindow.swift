extension AuthenticationInterceptor {
    /// How many refreshes may run within a span of time before the interceptor decides that
    /// refreshing does not help (every new credential is refused) and stops with
    /// `.authenticationRefreshLoop`. Also how long a failed refresh is remembered: requests
    /// that meet the same refused credential within `interval` fail with that refresh's error
    /// instead of starting another one.
    public struct RefreshWindow: Sendable, Hashable {
        /// The span of time looked back over.
        public var interval: Duration
        /// The most refreshes within ``interval``; the next one fails instead of running.
        public var maximumAttempts: Int

        /// Makes a window; the defaults, 5 refreshes in 30 seconds, are Alamofire's.
        public init(interval: Duration = .seconds(30), maximumAttempts: Int = 5) {
            self.interval = interval
            self.maximumAttempts = max(1, maximumAttempts)
        }
    }
}

import Courier

extension CourierClientTransport {
    /// Per-operation policies, keyed by the OpenAPI document's `operationId`.
    ///
    /// A policy field that an operation leaves nil falls back to ``defaultPolicy``, and from
    /// there to the session manager's own settings (its redirect policy, its interceptor, the
    /// transport's default deadline).
    public struct Configuration: Sendable {
        /// Policies for operations by `operationId`.
        public var operations: [String: OperationPolicy]
        /// The policy for every operation, under the per-operation ones.
        public var defaultPolicy: OperationPolicy

        /// Makes a configuration; empty by default, so every operation follows the manager.
        public init(operations: [String: OperationPolicy] = [:], defaultPolicy: OperationPolicy = OperationPolicy()) {
            self.operations = operations
            self.defaultPolicy = defaultPolicy
        }

        /// The policy that applies to `operationID`: its own fields, else the default's.
        public func policy(for operationID: String) -> OperationPolicy {
            guard let specific = operations[operationID] else { return defaultPolicy }
            return OperationPolicy(
                timeout: specific.timeout ?? defaultPolicy.timeout,
                retry: specific.retry ?? defaultPolicy.retry,
                maximumRedirects: specific.maximumRedirects ?? defaultPolicy.maximumRedirects)
        }
    }

    /// How one operation is sent; nil fields leave the decision to the next level down.
    public struct OperationPolicy: Sendable {
        /// The whole-exchange deadline, response body included (``/CourierCore/Request/timeoutInterval``);
        /// past it the call fails with ``/CourierCore/CourierError/Code/timedOut``.
        public var timeout: Duration?
        /// Decides whether a failed attempt is sent again (a ``/CourierCore/RetryPolicy``, say); asked before
        /// the manager's interceptor (see ``/CourierCore/TaskOverrides``). Only replayable bodies are resent.
        public var retry: (any RequestRetrier)?
        /// The most redirects followed; one more fails with ``/CourierCore/CourierError/Code/tooManyRedirects``
        /// (so 0 makes any redirect that error).
        public var maximumRedirects: Int?

        /// Makes a policy; every field defaults to "as the level below".
        public init(timeout: Duration? = nil, retry: (any RequestRetrier)? = nil, maximumRedirects: Int? = nil) {
            self.timeout = timeout
            self.retry = retry
            self.maximumRedirects = maximumRedirects
        }

        /// The session's form of the retry and redirect fields.
        var taskOverrides: TaskOverrides {
            TaskOverrides(
                redirectPolicy: maximumRedirects.map { RedirectPolicy(maximumRedirects: max(0, $0)) }, retrier: retry)
        }
    }
}

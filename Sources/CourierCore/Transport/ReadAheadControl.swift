/// Lets the reader of a response tell its transport, once the exchange is under way, that it may
/// hold more of the body ahead of it.
///
/// A session asks for a read-ahead when it sends (``ExchangeContext/readAheadLimit``), but it can
/// learn only from the response head that the body goes to a file: a did-receive-response hook
/// that answers `.becomeDownload` turns a data task into a download after its exchange began. The
/// session then raises the limit through ``TransportResponse/readAhead``, so that download reads
/// as far ahead as one that was a download from the start. A transport that cannot change its
/// limit mid-exchange hands out ``fixed``.
public struct ReadAheadControl: Sendable {
    private let raiseLimit: (@Sendable (Int) -> Void)?

    /// A control that calls `raise` with each limit a reader asks for; `raise` must not lower the
    /// transport's limit, and may be called from any task, at any point of the exchange.
    public init(raise: @escaping @Sendable (Int) -> Void) {
        self.raiseLimit = raise
    }

    private init() {
        self.raiseLimit = nil
    }

    /// A control that changes nothing: the exchange keeps the limit it started with.
    public static let fixed = ReadAheadControl()

    /// Lets the transport hold up to `limit` unread body bytes from now on; a limit at or below
    /// the current one, or a call after the body ended, changes nothing.
    public func raise(to limit: Int) {
        raiseLimit?(limit)
    }
}

import NIOCore

/// What the session tells a ``Transport`` about one exchange, besides the request itself.
///
/// Everything a transport needs to behave as the session expects is here, so a custom transport
/// gets the same deadline, cancellation and progress as the default one.
public struct ExchangeContext: Sendable {
    /// When the whole exchange, head and body, must be over; nil for no deadline.
    ///
    /// The caller owns the one timer for it (a session's task) and stops the exchange through
    /// ``cancellation`` when it passes; a transport arms no timer of its own for it, and reports an exchange
    /// cancelled at or past it as ``CourierError/Code/timedOut`` rather than `.cancelled`.
    public var deadline: NIODeadline?
    /// Receives the running count of body bytes handed to the connection, never decreasing
    /// within one exchange; nil when nobody is listening (a transport may then skip counting).
    public var uploadProgress: (@Sendable (Int64) -> Void)?
    /// Where the transport registers how to stop this exchange from outside the Swift task that
    /// runs it; every transport must register, and its action must stop the body too (see
    /// ``ExchangeCancellation``).
    public var cancellation: ExchangeCancellation
    /// Where the transport reports timings, byte counts and the connection it used, for
    /// ``TaskMetrics``; nil when nobody is listening. Optional to report: the session fills in
    /// what it sees itself.
    public var recorder: ExchangeRecorder?
    /// How many response body bytes the transport may hold for a reader that falls behind
    /// before it stops reading from the connection; nil leaves it to the transport
    /// (`AsyncHTTPClientTransport`: 1 MiB). A larger limit costs that much memory per exchange
    /// and saves wake-ups when the reader is slower than the network, as a file writer is. A
    /// transport may ignore it.
    public var readAheadLimit: Int?
    /// True when the body goes to a reader as it arrives (a download to a file, a
    /// ``SessionManager/stream(_:overrides:uploadProgress:)``, a data task that a `didReceiveResponse` hook may turn into
    /// a download), so that the reader's pace must hold the server back;
    /// false when the session collects it in memory. `AsyncHTTPClientTransport` may write such a
    /// download's file on the event loop (its `writesDownloadsOnEventLoop`).
    public var readsBodyIncrementally: Bool

    /// Makes a context; by default no deadline, no progress, a handle that nothing cancels, no
    /// recorder, the transport's own read-ahead, and a body collected in memory.
    public init(
        deadline: NIODeadline? = nil, uploadProgress: (@Sendable (Int64) -> Void)? = nil,
        cancellation: ExchangeCancellation = .none, recorder: ExchangeRecorder? = nil, readAheadLimit: Int? = nil,
        readsBodyIncrementally: Bool = false
    ) {
        self.deadline = deadline
        self.uploadProgress = uploadProgress
        self.cancellation = cancellation
        self.recorder = recorder
        self.readAheadLimit = readAheadLimit
        self.readsBodyIncrementally = readsBodyIncrementally
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

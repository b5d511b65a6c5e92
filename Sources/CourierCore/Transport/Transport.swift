import Foundation

/// Sends one HTTP exchange: a ``Request`` out, a response head and a streamed body back.
///
/// This is the whole boundary between a ``SessionManager`` and the network: everything the
/// session needs from a transport is in this protocol's types, so a custom transport (or
/// CourierTesting's `ScriptedTransport`) gets the same deadlines, cancellation, progress and
/// run path as the default `AsyncHTTPClientTransport`.
///
/// A transport follows no redirects and retries nothing; the session layer does both, so a
/// transport only has to move bytes. Every exchange registers its cancel action with
/// ``ExchangeContext/cancellation`` as soon as it exists, and the action stops it wherever it
/// is, response body included: a session stops its tasks that way, never by cancelling the
/// caller's Swift task. Cancelling the calling Swift `Task` cancels the exchange too, and so does
/// dropping the response body before it is fully read.
public protocol Transport: Sendable {
    /// What the session may rely on; read once, when a manager is made.
    var capabilities: TransportCapabilities { get }

    /// Sends `request` and returns once the response head has arrived.
    ///
    /// The body is produced from a fresh ``RequestBody/makeChunks()`` for every call, so a
    /// replayable body can be sent again. `context` carries the exchange's deadline, where to
    /// report upload progress, and the handle to register the exchange's cancel action with.
    /// - Throws: ``CourierError`` (`.cancelled`, `.timedOut`, `.connectionFailed`,
    ///   `.transportFailed`, or a body error such as `.bodyNotReplayable`). Any other error is
    ///   reported by the session as `.transportFailed`, with the error as its underlying error.
    func send(_ request: Request, context: ExchangeContext) async throws -> TransportResponse

    /// Closes connections and releases resources; sends after this fail.
    /// - Throws: ``CourierError`` `.transportFailed` when the underlying client does not shut down cleanly.
    func shutdown() async throws
}

extension Transport {
    /// No default deadline.
    public var capabilities: TransportCapabilities { TransportCapabilities() }
}

/// What a session may rely on a ``Transport`` for.
public struct TransportCapabilities: Sendable, Hashable {
    /// The whole-exchange time limit the transport applies when a request sets no
    /// ``Request/timeoutInterval``; nil for none. A session applies it to the whole task.
    public var defaultTimeout: Duration?
    /// How many connections the transport opens to one host at most; nil when it sets no limit
    /// of its own. A split download uses no more at once.
    public var maximumConnectionsPerHost: Int?

    /// Makes a description; by default no deadline and no connection limit.
    public init(defaultTimeout: Duration? = nil, maximumConnectionsPerHost: Int? = nil) {
        self.defaultTimeout = defaultTimeout
        self.maximumConnectionsPerHost = maximumConnectionsPerHost
    }
}

/// A response head and its body, still streaming.
public struct TransportResponse: Sendable {
    /// The status line and headers.
    public var head: ResponseHead
    /// The body bytes as they arrive; iterate once. Dropping it early cancels the exchange.
    public var body: BodyChunks
    /// True when the transport undid the response's content coding (`Content-Encoding`), so the
    /// body's bytes are not the ones a `Range` request counts: the session then keeps nothing
    /// of a download for resuming it.
    public var bodyIsDecoded: Bool
    /// Lets the transport hold up to the given number of unread body bytes from now on, beyond the
    /// ``ExchangeContext/readAheadLimit`` it started with; nil when it cannot change its limit
    /// mid-exchange. The session learns only from the head that a body goes to a file (a
    /// did-receive-response hook answering `.becomeDownload`), and raises the limit then so that
    /// download reads as far ahead as one that was a download from the start. It must never lower
    /// the limit, changes nothing after the body ended, and may be called from any task.
    public var raiseReadAhead: (@Sendable (Int) -> Void)?

    /// Makes a response; `bodyIsDecoded` says whether `body` is decoded from the coding `head`
    /// names, and `raiseReadAhead` how a reader widens the exchange's read-ahead.
    public init(
        head: ResponseHead, body: BodyChunks, bodyIsDecoded: Bool = false,
        raiseReadAhead: (@Sendable (Int) -> Void)? = nil
    ) {
        self.head = head
        self.body = body
        self.bodyIsDecoded = bodyIsDecoded
        self.raiseReadAhead = raiseReadAhead
    }
}

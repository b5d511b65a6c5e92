import Foundation

/// Where the time of one task went, attempt by attempt: Courier's counterpart of
/// `URLSessionTaskMetrics`, filled on every platform (Foundation on Linux never calls its
/// metrics callback).
///
/// Instants come from `ContinuousClock`, so durations are monotonic and comparable within the
/// process; they are not wall-clock times. Read them on ``SessionResponse/metrics``.
public struct TaskMetrics: Sendable {
    /// When the task began its first attempt, and when its outcome was ready (see
    /// ``ClockReading`` for why not as `Instant`s).
    var started, ended: ClockReading
    /// The attempts, kept so that a task of one attempt (nearly all) allocates no array until
    /// someone reads ``attempts``.
    var attemptList: AttemptList

    /// Makes metrics from their parts.
    public init(taskStart: ContinuousClock.Instant, taskEnd: ContinuousClock.Instant, attempts: [AttemptMetrics]) {
        self.init(started: ClockReading(taskStart), ended: ClockReading(taskEnd), attemptList: AttemptList(attempts))
    }

    init(started: ClockReading, ended: ClockReading, attemptList: AttemptList) {
        self.started = started
        self.ended = ended
        self.attemptList = attemptList
    }

    /// When the task began its first attempt.
    public var taskStart: ContinuousClock.Instant {
        get { started.instant }
        set { started = ClockReading(newValue) }
    }

    /// When the task's outcome was ready (for a streamed response: when its head arrived).
    public var taskEnd: ContinuousClock.Instant {
        get { ended.instant }
        set { ended = ClockReading(newValue) }
    }

    /// Every exchange the task made, in order: the first request, each redirect hop and each retry.
    public var attempts: [AttemptMetrics] {
        get { attemptList.array }
        set { attemptList = AttemptList(newValue) }
    }

    /// No attempts, for a response that no task made.
    static var unrecorded: TaskMetrics {
        let now = ClockReading.now
        return TaskMetrics(started: now, ended: now, attemptList: AttemptList())
    }

    /// The whole task, first attempt to outcome.
    public var taskInterval: Duration { started.duration(to: ended) }
    /// Redirects followed.
    public var redirectCount: Int { attemptList.count { $0.reason == .redirect } }
    /// Requests sent again after a failure or a retryable answer.
    public var retryCount: Int { attemptList.count { $0.reason == .retry } }
}

/// A task's attempts: the first inline, later ones (redirects, retries) in an array.
struct AttemptList: Sendable {
    private var first: AttemptMetrics?
    private var rest: [AttemptMetrics] = []

    init() {}

    init(_ attempts: [AttemptMetrics]) {
        first = attempts.first
        rest = Array(attempts.dropFirst())
    }

    var count: Int { first == nil ? 0 : 1 + rest.count }

    var array: [AttemptMetrics] { first.map { [$0] + rest } ?? [] }

    /// The latest attempt.
    var last: AttemptMetrics? { rest.last ?? first }

    /// Changes the latest attempt where it is stored: copying one out and back costs a
    /// small GET a few thousand instructions (its instants are resilient types).
    mutating func modifyLast(_ change: (inout AttemptMetrics) -> Void) {
        if !rest.isEmpty {
            change(&rest[rest.count - 1])
        } else if first != nil {
            change(&first!)
        }
    }

    mutating func append(_ attempt: AttemptMetrics) {
        if first == nil { first = attempt } else { rest.append(attempt) }
    }

    func count(where matches: (AttemptMetrics) -> Bool) -> Int {
        (first.map { matches($0) ? 1 : 0 } ?? 0) + rest.count(where: matches)
    }
}

/// One exchange of a task: a request sent and what came back.
///
/// The session fills ``requestStart``, ``responseHeadReceived``, ``responseBodyComplete``, the
/// status and the decoded byte count itself; the head-sent and body-sent instants, the byte
/// counts on the wire and the connection come from the ``Transport`` (through
/// ``ExchangeRecorder``) and are nil when it did not report them.
public struct AttemptMetrics: Sendable {
    /// Why this exchange was made.
    public enum Reason: Sendable, Hashable {
        /// The task's first request.
        case initial
        /// A redirect hop.
        case redirect
        /// A retry after a failure or a retryable response.
        case retry
    }

    /// Why this exchange was made.
    public var reason: Reason
    /// The request method.
    public var method: HTTPMethod
    /// The request URL, credentials included (redact before logging it).
    public var url: URL
    /// The instants below, as ``ClockReading``s (plain values to copy).
    var started: ClockReading
    var headSent, bodySent, headReceived, bodyComplete: ClockReading?
    /// Request body bytes sent: the transport's count, else the body's length once a response
    /// arrived, else 0.
    public var bytesSent: Int64
    /// Response body bytes as the server sent them, before content decoding: the transport's
    /// count, else the decoded count when the body had no content coding, else its
    /// `Content-Length` when it was read to the end; nil when none of these is known.
    public var bytesReceived: Int64?
    /// Response body bytes after content decoding, as delivered.
    public var decodedBytesReceived: Int64
    /// The response status code; nil when no response arrived.
    public var statusCode: Int?
    /// The response's HTTP version, when known.
    public var httpVersion: HTTPProtocolVersion?
    /// True when the exchange reused a connection, false for a new one; nil when the transport
    /// could not tell.
    public var reusedConnection: Bool?
    /// The peer's address (`host:port`), when the transport could tell.
    public var remoteAddress: String?
    /// Why the exchange failed, when it did.
    public var errorCode: CourierError.Code?

    /// Makes an attempt's metrics as of its start.
    public init(reason: Reason, method: HTTPMethod, url: URL, requestStart: ContinuousClock.Instant) {
        self.init(reason: reason, method: method, url: url, started: ClockReading(requestStart))
    }

    init(reason: Reason, method: HTTPMethod, url: URL, started: ClockReading) {
        self.reason = reason
        self.method = method
        self.url = url
        self.started = started
        self.bytesSent = 0
        self.decodedBytesReceived = 0
    }

    /// When the session handed the request to the transport.
    public var requestStart: ContinuousClock.Instant {
        get { started.instant }
        set { started = ClockReading(newValue) }
    }

    /// When the request head went out, if the transport said.
    public var requestHeadSent: ContinuousClock.Instant? {
        get { headSent.instant }
        set { headSent.instant = newValue }
    }

    /// When the whole request went out, if the transport said.
    public var requestBodySent: ContinuousClock.Instant? {
        get { bodySent.instant }
        set { bodySent.instant = newValue }
    }

    /// When the response head arrived; nil when none did.
    public var responseHeadReceived: ContinuousClock.Instant? {
        get { headReceived.instant }
        set { headReceived.instant = newValue }
    }

    /// When the response body ended; nil when it was not read to its end (a failure, a
    /// streamed response still being read, or a redirect body dropped unread).
    public var responseBodyComplete: ContinuousClock.Instant? {
        get { bodyComplete.instant }
        set { bodyComplete.instant = newValue }
    }

    /// Request start to response head: the time to first byte, as curl's `time_starttransfer`.
    public var timeToResponseHead: Duration? { headReceived.map { started.duration(to: $0) } }
    /// Request start to body end (or to the head, when the body was not read to its end).
    public var duration: Duration? {
        (bodyComplete ?? headReceived).map { started.duration(to: $0) }
    }
}

import NIOConcurrencyHelpers

/// Where a ``Transport`` reports the timings and counts of one exchange that only it can see.
///
/// The session hands one to the transport in ``ExchangeContext/recorder`` for every attempt
/// and fills what the transport leaves out from what it sees itself (the attempt's start, the
/// response head's arrival, the body it reads), so a transport that reports nothing still
/// gives complete ``TaskMetrics`` apart from those fields. Every call is cheap (a clock read
/// and a short lock) and safe from any thread, event loops included; later calls overwrite
/// earlier ones.
public struct ExchangeRecorder: Sendable {
    private let box: NIOLockedValueBox<ExchangeRecord>

    /// Makes an empty recorder.
    public init() {
        box = NIOLockedValueBox(ExchangeRecord())
    }

    /// The request head was handed to the connection; `connection` is what the transport knows
    /// of that connection then, kept as ``connection(_:)`` keeps it, in the same turn of the lock.
    /// `endsRequest` says the head went out with the request's end (a request without a body):
    /// the whole request counts as sent then, with no body bytes, as ``requestSent(bodyBytes:at:)``
    /// would record it, without a second turn of the lock.
    public func requestHeadSent(
        at instant: ContinuousClock.Instant = .now, connection info: ConnectionInfo? = nil, endsRequest: Bool = false
    ) {
        let reading = ClockReading(instant)
        box.withLockedValue { record in
            record.headSent = reading
            if endsRequest {
                record.bodySent = reading
                record.bodyBytesSent = 0
            }
            if let info { record.merge(info) }
        }
    }

    /// The whole request, body included, was handed to the connection; `bodyBytes` is how many
    /// body bytes went out, when the transport counted them.
    public func requestSent(bodyBytes: Int64? = nil, at instant: ContinuousClock.Instant = .now) {
        stamp(\.bodySent, at: instant, count: bodyBytes, in: \.bodyBytesSent)
    }

    /// The response head arrived.
    public func responseHeadReceived(at instant: ContinuousClock.Instant = .now) {
        stamp(\.headReceived, at: instant)
    }

    /// The response body ended; `wireBytes` is its length as received, before any content
    /// decoding, when the transport counted it. `headAt`, when given, is when the response head
    /// arrived, as ``responseHeadReceived(at:)`` would record it, in the same turn of the lock: a
    /// transport that keeps the head's instant until the end takes the lock once per response.
    public func responseBodyReceived(
        wireBytes: Int64? = nil, headAt: ContinuousClock.Instant? = nil, at instant: ContinuousClock.Instant = .now
    ) {
        let head = headAt.map(ClockReading.init)
        let end = ClockReading(instant)
        box.withLockedValue { record in
            if let head { record.headReceived = head }
            record.bodyComplete = end
            if let wireBytes { record.wireBodyBytesReceived = wireBytes }
        }
    }

    /// What the transport knows of the connection; nil fields leave earlier values in place.
    public func connection(_ info: ConnectionInfo) {
        box.withLockedValue { $0.merge(info) }
    }

    /// Sets `moment` to `instant` and, when the transport counted them, `count` into `countField`;
    /// a nil count leaves an earlier one in place.
    private func stamp(
        _ moment: WritableKeyPath<ExchangeRecord, ClockReading?>, at instant: ContinuousClock.Instant,
        count: Int64? = nil, in countField: WritableKeyPath<ExchangeRecord, Int64?>? = nil
    ) {
        box.withLockedValue { record in
            record[keyPath: moment] = ClockReading(instant)
            if let count, let countField { record[keyPath: countField] = count }
        }
    }

    /// Everything reported so far.
    public var observation: ExchangeObservation {
        ExchangeObservation(record)
    }

    /// Everything reported so far, as the session merges it into the attempt's metrics.
    var record: ExchangeRecord {
        box.withLockedValue { $0 }
    }
}

/// What a recorder holds: an ``ExchangeObservation`` with its instants as ``ClockReading``s,
/// which copy as plain values.
struct ExchangeRecord: Sendable {
    var headSent, bodySent, headReceived, bodyComplete: ClockReading?
    var bodyBytesSent: Int64?
    var wireBodyBytesReceived: Int64?
    var connection: ConnectionInfo?

    /// Takes `info`'s fields over the connection's; nil fields leave earlier values in place.
    mutating func merge(_ info: ConnectionInfo) {
        var merged = connection ?? ConnectionInfo()
        if let reused = info.reused { merged.reused = reused }
        if let remoteAddress = info.remoteAddress { merged.remoteAddress = remoteAddress }
        if let httpVersion = info.httpVersion { merged.httpVersion = httpVersion }
        connection = merged
    }
}

/// What a transport reported of one exchange through an ``ExchangeRecorder``; nil for what it
/// did not report.
public struct ExchangeObservation: Sendable {
    /// When the request head was handed to the connection.
    public var requestHeadSent: ContinuousClock.Instant?
    /// When the whole request was handed to the connection.
    public var requestBodySent: ContinuousClock.Instant?
    /// When the response head arrived.
    public var responseHeadReceived: ContinuousClock.Instant?
    /// When the response body ended.
    public var responseBodyComplete: ContinuousClock.Instant?
    /// Request body bytes handed to the connection.
    public var bodyBytesSent: Int64?
    /// Response body bytes as received, before content decoding.
    public var wireBodyBytesReceived: Int64?
    /// The connection, as far as the transport could tell.
    public var connection: ConnectionInfo?

    /// Makes an empty observation.
    public init() {}

    init(_ record: ExchangeRecord) {
        requestHeadSent = record.headSent.instant
        requestBodySent = record.bodySent.instant
        responseHeadReceived = record.headReceived.instant
        responseBodyComplete = record.bodyComplete.instant
        bodyBytesSent = record.bodyBytesSent
        wireBodyBytesReceived = record.wireBodyBytesReceived
        connection = record.connection
    }
}

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
    private let box: NIOLockedValueBox<ExchangeObservation>

    /// Makes an empty recorder.
    public init() {
        box = NIOLockedValueBox(ExchangeObservation())
    }

    /// The request head was handed to the connection.
    public func requestHeadSent(at instant: ContinuousClock.Instant) {
        requestHeadSent(at: ClockReading(instant))
    }

    /// The request head was handed to the connection just now.
    public func requestHeadSent() {
        requestHeadSent(at: ClockReading.now)
    }

    private func requestHeadSent(at reading: ClockReading) {
        box.withLockedValue { $0.headSent = reading }
    }

    /// The whole request, body included, was handed to the connection; `bodyBytes` is how many
    /// body bytes went out, when the transport counted them.
    public func requestSent(bodyBytes: Int64? = nil, at instant: ContinuousClock.Instant) {
        requestSent(bodyBytes: bodyBytes, at: ClockReading(instant))
    }

    /// The whole request went out just now; `bodyBytes` as in ``requestSent(bodyBytes:at:)``.
    public func requestSent(bodyBytes: Int64? = nil) {
        requestSent(bodyBytes: bodyBytes, at: ClockReading.now)
    }

    private func requestSent(bodyBytes: Int64?, at reading: ClockReading) {
        box.withLockedValue {
            $0.bodySent = reading
            if let bodyBytes { $0.bodyBytesSent = bodyBytes }
        }
    }

    /// The response head arrived.
    public func responseHeadReceived(at instant: ContinuousClock.Instant) {
        responseHeadReceived(at: ClockReading(instant))
    }

    /// The response head arrived just now.
    public func responseHeadReceived() {
        responseHeadReceived(at: ClockReading.now)
    }

    private func responseHeadReceived(at reading: ClockReading) {
        box.withLockedValue { $0.headReceived = reading }
    }

    /// The response body ended; `wireBytes` is its length as received, before any content
    /// decoding, when the transport counted it.
    public func responseBodyReceived(wireBytes: Int64? = nil, at instant: ContinuousClock.Instant) {
        responseBodyReceived(wireBytes: wireBytes, at: ClockReading(instant))
    }

    /// The response body ended just now; `wireBytes` as in ``responseBodyReceived(wireBytes:at:)``.
    public func responseBodyReceived(wireBytes: Int64? = nil) {
        responseBodyReceived(wireBytes: wireBytes, at: ClockReading.now)
    }

    private func responseBodyReceived(wireBytes: Int64?, at reading: ClockReading) {
        box.withLockedValue {
            $0.bodyComplete = reading
            if let wireBytes { $0.wireBodyBytesReceived = wireBytes }
        }
    }

    /// What the transport knows of the connection; nil fields leave earlier values in place.
    public func connection(_ info: ConnectionInfo) {
        box.withLockedValue { state in
            var merged = state.connection ?? ConnectionInfo()
            if let reused = info.reused { merged.reused = reused }
            if let remoteAddress = info.remoteAddress { merged.remoteAddress = remoteAddress }
            if let httpVersion = info.httpVersion { merged.httpVersion = httpVersion }
            state.connection = merged
        }
    }

    /// Everything reported so far.
    public var observation: ExchangeObservation {
        box.withLockedValue { $0 }
    }
}

/// What a transport reported of one exchange through an ``ExchangeRecorder``; nil for what it
/// did not report.
public struct ExchangeObservation: Sendable {
    /// The instants below, as ``ClockReading``s (plain values to copy).
    var headSent, bodySent, headReceived, bodyComplete: ClockReading?
    /// Request body bytes handed to the connection.
    public var bodyBytesSent: Int64?
    /// Response body bytes as received, before content decoding.
    public var wireBodyBytesReceived: Int64?
    /// The connection, as far as the transport could tell.
    public var connection: ConnectionInfo?

    /// Makes an empty observation.
    public init() {}

    /// When the request head was handed to the connection.
    public var requestHeadSent: ContinuousClock.Instant? {
        get { headSent.instant }
        set { headSent = newValue.map(ClockReading.init) }
    }

    /// When the whole request was handed to the connection.
    public var requestBodySent: ContinuousClock.Instant? {
        get { bodySent.instant }
        set { bodySent = newValue.map(ClockReading.init) }
    }

    /// When the response head arrived.
    public var responseHeadReceived: ContinuousClock.Instant? {
        get { headReceived.instant }
        set { headReceived = newValue.map(ClockReading.init) }
    }

    /// When the response body ended.
    public var responseBodyComplete: ContinuousClock.Instant? {
        get { bodyComplete.instant }
        set { bodyComplete = newValue.map(ClockReading.init) }
    }
}

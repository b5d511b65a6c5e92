import Foundation
import Metrics
import Tracing

/// One task's observation, owned by its run: the ``TaskMetrics`` it builds attempt by
/// attempt, and the spans, metrics and log lines it reports through the manager's
/// ``SessionInstruments``. A value no other thread sees; the transport's side of each attempt
/// arrives through the attempt's ``ExchangeRecorder``.
struct TaskObserver {
    let instruments: SessionInstruments
    let taskStart: ClockReading
    private(set) var attempts = AttemptList()
    /// Why the next attempt is made; set by the run before it loops.
    var nextReason = AttemptMetrics.Reason.initial
    private var recorder: ExchangeRecorder?
    private var attemptOpen = false
    /// The current attempt's declared body length, for when the transport counts nothing.
    private var bodyLength: Int64?
    /// Set only while an instrument is active.
    var telemetry: Telemetry?
    /// Whether ``telemetry`` is set, kept apart: testing the optional itself copies it out.
    private let reportsTelemetry: Bool

    /// The per-task state of the instruments.
    struct Telemetry {
        var requestID: String
        var taskSpan: (any Span)?
        var attemptSpan: (any Span)?
        var activeRequests: Meter?
        var requestHeaders: HTTPFieldsSnapshot?
    }

    /// A request's headers as they went out, kept for the attempt's log line.
    typealias HTTPFieldsSnapshot = [(name: String, value: String)]

    init(instruments: SessionInstruments, taskIdentifier: Int) {
        self.instruments = instruments
        self.taskStart = .now
        self.reportsTelemetry = instruments.isActive
        if instruments.isActive {
            let random = String(UInt32.random(in: .min ... .max), radix: 16)
            telemetry = Telemetry(
                requestID: String(repeating: "0", count: 8 - random.count) + random + "-\(taskIdentifier)")
        }
    }

    /// Where the current attempt stood, for a deadline's message: whether its response had
    /// begun, and, when its transport says so, whether its request had gone out. Nil before
    /// any attempt.
    var stage: String? {
        guard let attempt = attempts.last else { return nil }
        if attempt.headReceived != nil { return "while the response body was arriving" }
        if attempt.headSent != nil || recorder?.record.headSent != nil {
            return "while waiting for the response after the request was sent"
        }
        return "before the response began (resolving, connecting, the TLS handshake, a proxy's CONNECT or sending)"
    }

    /// Starts an attempt for `request` (adding trace-context headers to it when tracing) and
    /// returns the recorder to hand the transport.
    mutating func beginAttempt(_ request: inout Request) -> ExchangeRecorder {
        if attemptOpen { endAttempt(errorCode: nil, record: recorder?.record) }
        let recorder = ExchangeRecorder()
        self.recorder = recorder
        attemptOpen = true
        bodyLength = request.body.isEmpty ? 0 : request.body.contentLength
        attempts.append(
            AttemptMetrics(reason: nextReason, method: request.method, url: request.url, started: .now))
        if reportsTelemetry { beginTelemetry(&request) }
        return recorder
    }

    /// The attempt's response head arrived.
    mutating func attemptAnswered(_ head: ResponseHead) {
        attempts.modifyLast { attempt in
            attempt.headReceived = .now
            attempt.statusCode = head.statusCode
            attempt.httpVersion = head.httpVersion
        }
    }

    /// The attempt's body was read to its end (`decodedBytes` of it), or dropped unread (nil).
    mutating func attemptBodyEnded(decodedBytes: Int64?, head: ResponseHead?) {
        guard attemptOpen else { return }
        let record = recorder?.record
        if let decodedBytes {
            // The transport's count of the bytes on the wire, merged below, stands where it kept
            // one; only without it is the head's declared length worked out (a pass over its fields).
            let declared = record?.wireBodyBytesReceived == nil ? head?.declaredBody : nil
            attempts.modifyLast { attempt in
                attempt.bodyComplete = .now
                attempt.decodedBytesReceived = decodedBytes
                if let declared {
                    attempt.bytesReceived = declared.isCoded ? declared.length : decodedBytes
                }
            }
        }
        endAttempt(errorCode: nil, record: record)
    }

    /// The attempt failed with `error` (before its head, or while its body was read).
    mutating func attemptFailed(_ error: CourierError) {
        guard attemptOpen else { return }
        endAttempt(errorCode: error.code, record: recorder?.record)
    }

    /// The metrics so far, ending now; any open attempt is closed first.
    mutating func metrics() -> TaskMetrics {
        if attemptOpen { endAttempt(errorCode: nil, record: recorder?.record) }
        return TaskMetrics(started: taskStart, ended: .now, attemptList: attempts)
    }

    /// The task's outcome: closes any open attempt and the task's span.
    mutating func finish(_ result: Result<SessionResponse, CourierError>) {
        if attemptOpen {
            if case .failure(let error) = result {
                endAttempt(errorCode: error.code, record: recorder?.record)
            } else {
                endAttempt(errorCode: nil, record: recorder?.record)
            }
        }
        if reportsTelemetry { finishTelemetry(result) }
    }

    /// Merges what the transport reported (`record`, read once by the caller) into the attempt,
    /// then reports the attempt.
    private mutating func endAttempt(errorCode: CourierError.Code?, record: ExchangeRecord?) {
        attemptOpen = false
        let bodyLength = bodyLength
        attempts.modifyLast { attempt in
            if let record { Self.merge(record, into: &attempt, bodyLength: bodyLength) }
            attempt.errorCode = errorCode
        }
        recorder = nil
        if reportsTelemetry, let attempt = attempts.last { endTelemetry(attempt) }
    }

    /// Fills the attempt with what the transport reported; the session's own instants stand
    /// where the transport reported none.
    private static func merge(
        _ record: ExchangeRecord, into attempt: inout AttemptMetrics, bodyLength: Int64?
    ) {
        attempt.headSent = record.headSent
        attempt.bodySent = record.bodySent
        if let reading = record.headReceived, attempt.headReceived != nil {
            attempt.headReceived = reading
        }
        if let reading = record.bodyComplete, attempt.bodyComplete != nil {
            attempt.bodyComplete = reading
        }
        if let wire = record.wireBodyBytesReceived, attempt.bodyComplete != nil {
            attempt.bytesReceived = wire
        }
        if let sent = record.bodyBytesSent {
            attempt.bytesSent = sent
        } else if attempt.headReceived != nil {
            attempt.bytesSent = bodyLength ?? 0
        }
        if let connection = record.connection {
            attempt.reusedConnection = connection.reused
            attempt.remoteAddress = connection.remoteAddress
            attempt.httpVersion = attempt.httpVersion ?? connection.httpVersion
        }
    }
}

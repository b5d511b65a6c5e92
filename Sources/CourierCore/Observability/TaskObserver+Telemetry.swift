import Foundation
import HTTPTypes
import Logging
import Metrics
import Tracing

/// Spans, metrics and log lines, named as OpenTelemetry's HTTP client semantic conventions name
/// them: one client span per task and one per attempt (`http.request.method`, `url.full`
/// redacted, `server.address`, `server.port`, `http.response.status_code`,
/// `http.request.resend_count`, `network.protocol.version`, `error.type`), the
/// `http.client.request.duration` timer and `http.client.active_requests` meter, Courier's
/// byte and retry counters, and one debug line per attempt.
extension TaskObserver {
    /// Names of the metrics a manager records.
    enum MetricName {
        static let requestDuration = "http.client.request.duration"
        static let activeRequests = "http.client.active_requests"
        static let bytesSent = "courier.client.bytes_sent"
        static let bytesReceived = "courier.client.bytes_received"
        static let retries = "courier.client.retries"
    }

    mutating func beginTelemetry(_ request: inout Request) {
        guard var telemetry else { return }
        let attemptIndex = attempts.count - 1
        if let tracer = instruments.tracer {
            if telemetry.taskSpan == nil {
                let span = tracer.startSpan(
                    request.method.rawValue, context: ServiceContext.current ?? .topLevel, ofKind: .client)
                span.attributes = requestAttributes(request, resendCount: nil)
                telemetry.taskSpan = span
            }
            let parent = telemetry.taskSpan?.context ?? ServiceContext.current ?? .topLevel
            let span = tracer.startSpan(request.method.rawValue, context: parent, ofKind: .client)
            span.attributes = requestAttributes(request, resendCount: attemptIndex > 0 ? attemptIndex : nil)
            tracer.inject(span.context, into: &request.headerFields, using: HTTPFieldsInjector())
            telemetry.attemptSpan = span
        }
        if let factory = instruments.metricsFactory {
            let meter = Meter(
                label: MetricName.activeRequests, dimensions: serverDimensions(request.method, request.url),
                factory: factory)
            meter.increment()
            telemetry.activeRequests = meter
            if nextReason == .retry {
                Counter(
                    label: MetricName.retries, dimensions: serverDimensions(request.method, request.url),
                    factory: factory
                )
                .increment()
            }
        }
        if instruments.logger != nil {
            telemetry.requestHeaders = instruments.redaction.redacted(request.headerFields)
        }
        self.telemetry = telemetry
    }

    mutating func endTelemetry(_ attempt: AttemptMetrics) {
        guard var telemetry else { return }
        let errorType = Self.errorType(status: attempt.statusCode, code: attempt.errorCode)
        if let span = telemetry.attemptSpan {
            span.updateAttributes { attributes in
                if let status = attempt.statusCode { attributes["http.response.status_code"] = status }
                if let version = attempt.httpVersion { attributes["network.protocol.version"] = version.versionNumber }
                if let errorType { attributes["error.type"] = errorType }
            }
            if errorType != nil { span.setStatus(SpanStatus(code: .error)) }
            span.end()
            telemetry.attemptSpan = nil
        }
        if let factory = instruments.metricsFactory {
            telemetry.activeRequests?.decrement()
            telemetry.activeRequests = nil
            var dimensions = serverDimensions(attempt.method, attempt.url)
            if let status = attempt.statusCode { dimensions.append(("http.response.status_code", String(status))) }
            if let errorType { dimensions.append(("error.type", errorType)) }
            let end = attempt.bodyComplete ?? attempt.headReceived ?? .now
            let elapsed = attempt.started.duration(to: end)
            Timer(label: MetricName.requestDuration, dimensions: dimensions, factory: factory)
                .recordNanoseconds(
                    elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
            let server = serverDimensions(attempt.method, attempt.url)
            if attempt.bytesSent > 0 {
                Counter(label: MetricName.bytesSent, dimensions: server, factory: factory).increment(
                    by: attempt.bytesSent)
            }
            let received = attempt.bytesReceived ?? attempt.decodedBytesReceived
            if received > 0 {
                Counter(label: MetricName.bytesReceived, dimensions: server, factory: factory).increment(by: received)
            }
        }
        if let logger = instruments.logger {
            log(
                attempt, errorType: errorType, headers: telemetry.requestHeaders ?? [], to: logger,
                requestID: telemetry.requestID)
            telemetry.requestHeaders = nil
        }
        self.telemetry = telemetry
    }

    mutating func finishTelemetry(_ result: Result<SessionResponse, CourierError>) {
        guard var telemetry, let span = telemetry.taskSpan else { return }
        let status: Int?
        let errorType: String?
        switch result {
        case .success(let response):
            status = response.response.statusCode
            errorType = Self.errorType(status: status, code: nil)
        case .failure(let error):
            status = error.response?.statusCode ?? attempts.last?.statusCode
            errorType = Self.errorType(status: nil, code: error.code)
        }
        span.updateAttributes { attributes in
            if let status { attributes["http.response.status_code"] = status }
            if let errorType { attributes["error.type"] = errorType }
        }
        if case .failure(let error) = result {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
        } else if errorType != nil {
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
        telemetry.taskSpan = nil
        self.telemetry = telemetry
    }

    /// The request attributes every span carries.
    private func requestAttributes(_ request: Request, resendCount: Int?) -> SpanAttributes {
        var attributes = SpanAttributes()
        attributes["http.request.method"] = request.method.rawValue
        attributes["url.full"] = instruments.redaction.redactedForTelemetry(request.url)
        if let host = request.url.host { attributes["server.address"] = host }
        if let port = Self.port(of: request.url) { attributes["server.port"] = port }
        if let resendCount { attributes["http.request.resend_count"] = resendCount }
        return attributes
    }

    private func serverDimensions(_ method: HTTPMethod, _ url: URL) -> [(String, String)] {
        var dimensions = [("http.request.method", method.rawValue)]
        if let host = url.host { dimensions.append(("server.address", host)) }
        if let port = Self.port(of: url) { dimensions.append(("server.port", String(port))) }
        return dimensions
    }

    /// The URL's port, else its scheme's default.
    static func port(of url: URL) -> Int? {
        if let port = url.port { return port }
        switch url.scheme?.lowercased() {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }

    /// OpenTelemetry's `error.type`: the error's code, else a 4xx or 5xx status as a string.
    static func errorType(status: Int?, code: CourierError.Code?) -> String? {
        if let code { return code.description }
        if let status, status >= 400 { return String(status) }
        return nil
    }

    private func log(
        _ attempt: AttemptMetrics, errorType: String?, headers: HTTPFieldsSnapshot, to logger: Logger, requestID: String
    ) {
        let index = attempts.count - 1
        let url = instruments.redaction.redactedForTelemetry(attempt.url)
        var outcome = attempt.statusCode.map { "\($0)" } ?? "failed (\(errorType ?? "unknown"))"
        if let duration = attempt.duration {
            outcome += String(
                format: " in %.1f ms",
                Double(duration.components.attoseconds) / 1e15 + Double(duration.components.seconds) * 1e3)
        }
        var details = ["attempt \(index + 1)"]
        if attempt.reason != .initial { details.append("\(attempt.reason)") }
        if let version = attempt.httpVersion { details.append(version.description) }
        if let reused = attempt.reusedConnection { details.append(reused ? "reused connection" : "new connection") }
        var metadata: Logger.Metadata = [
            "courier.request.id": "\(requestID)",
            "http.request.method": "\(attempt.method.rawValue)",
            "url.full": "\(url)",
            "http.request.headers": .array(headers.map { .string("\($0.name): \($0.value)") }),
        ]
        if index > 0 { metadata["http.request.resend_count"] = "\(index)" }
        if let status = attempt.statusCode { metadata["http.response.status_code"] = "\(status)" }
        if let errorType { metadata["error.type"] = "\(errorType)" }
        logger.debug(
            "\(attempt.method.rawValue) \(url) → \(outcome) (\(details.joined(separator: ", ")))", metadata: metadata)
    }
}

/// Writes trace-context fields (W3C `traceparent`, `tracestate`, or whatever the tracer uses)
/// into a request's header fields, replacing any of the same name.
struct HTTPFieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout HTTPFields) {
        guard let name = HTTPField.Name(key) else { return }
        carrier[name] = value
    }
}

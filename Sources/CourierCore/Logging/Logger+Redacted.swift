import Foundation
import HTTPTypes
import Logging

extension Logger {
    /// Logs a request line and its headers with credentials redacted (see ``HeaderRedaction``).
    ///
    /// The message is `"→ METHOD url"`; headers go into metadata under `http.request.headers`
    /// so log handlers can format or drop them. Bodies are never logged.
    public func logRequest(
        _ request: Request, level: Logger.Level = .debug, redaction: HeaderRedaction = HeaderRedaction(),
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        logHead(
            "→ \(request.method.rawValue) \(redaction.redacted(request.url))", level: level,
            headersKey: "http.request.headers", headers: redaction.redacted(request.headerFields),
            file: file, function: function, line: line)
    }

    /// Logs a response status line and its headers with credentials (`Set-Cookie`) redacted.
    public func logResponse(
        _ response: ResponseHead, level: Logger.Level = .debug, redaction: HeaderRedaction = HeaderRedaction(),
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        logHead(
            "← \(response.statusCode) \(redaction.redacted(response.url))", level: level,
            headersKey: "http.response.headers", headers: redaction.redacted(response.headerFields),
            file: file, function: function, line: line)
    }

    /// Logs a start line with already-redacted headers as metadata under `headersKey`.
    ///
    /// The message and headers are autoclosures so a disabled level costs no redaction.
    private func logHead(
        _ message: @autoclosure () -> Logger.Message, level: Logger.Level,
        headersKey: String, headers: @autoclosure () -> [(name: String, value: String)],
        file: String, function: String, line: UInt
    ) {
        guard logLevel <= level else { return }
        log(
            level: level, message(),
            metadata: [headersKey: .array(headers().map { .string("\($0.name): \($0.value)") })],
            file: file, function: function, line: line)
    }
}

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
        guard logLevel <= level else { return }
        log(
            level: level, "→ \(request.method.rawValue) \(redaction.redacted(request.url))",
            metadata: ["http.request.headers": Self.metadata(redaction.redacted(request.headerFields))],
            file: file, function: function, line: line
        )
    }

    /// Logs a response status line and its headers with credentials (`Set-Cookie`) redacted.
    public func logResponse(
        _ response: ResponseHead, level: Logger.Level = .debug, redaction: HeaderRedaction = HeaderRedaction(),
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        guard logLevel <= level else { return }
        log(
            level: level, "← \(response.statusCode) \(redaction.redacted(response.url))",
            metadata: ["http.response.headers": Self.metadata(redaction.redacted(response.headerFields))],
            file: file, function: function, line: line
        )
    }

    private static func metadata(_ fields: [(name: String, value: String)]) -> Logger.MetadataValue {
        .array(fields.map { .string("\($0.name): \($0.value)") })
    }
}

import Courier
import Foundation
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
import Testing

@testable import CourierCore

/// Records every log line so tests can look at what would have been printed.
final class RecordingLogHandler: LogHandler, @unchecked Sendable {
    struct Entry: Sendable { var message: String; var metadata: Logger.Metadata }
    private let storage: NIOLockedValueBox<[Entry]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    init(storage: NIOLockedValueBox<[Entry]>) { self.storage = storage }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        storage.withLockedValue { $0.append(Entry(message: "\(event.message)", metadata: event.metadata ?? [:])) }
    }
}

@Suite struct HeaderRedactionTests {
    let redaction = HeaderRedaction()

    @Test func credentialsKeepOnlyTheScheme() {
        #expect(redaction.redactedValue("Basic dXNlcjpwYXNzd29yZA==", forField: "Authorization") == "Basic <redacted>")
        #expect(redaction.redactedValue("Bearer eyJhbGciOi.x.y", forField: "authorization") == "Bearer <redacted>")
        #expect(
            redaction.redactedValue("Digest username=\"u\", response=\"abc\"", forField: "PROXY-AUTHORIZATION")
                == "Digest <redacted>")
        #expect(redaction.redactedValue("rawtoken", forField: "Authorization") == "<redacted>")
    }

    @Test func cookiesKeepNamesAndAttributes() {
        #expect(
            redaction.redactedValue("session=abc123; theme=dark", forField: "Cookie")
                == "session=<redacted>; theme=<redacted>")
        #expect(redaction.redactedValue("lonely", forField: "Cookie") == "<redacted>")
        #expect(
            redaction.redactedValue("id=s3cr3t; Path=/; HttpOnly; Secure", forField: "Set-Cookie")
                == "id=<redacted>; Path=/; HttpOnly; Secure")
    }

    @Test func otherFieldsPassAndExtraNamesAreHidden() {
        #expect(redaction.redactedValue("text/html", forField: "Accept") == "text/html")
        let extended = HeaderRedaction(additionalFieldNames: ["X-API-Key"])
        #expect(extended.redactedValue("k-123", forField: "x-api-key") == "<redacted>")
    }

    @Test func fieldsInOrderWithRepeats() {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .accept, value: "*/*"))
        fields.append(HTTPField(name: .setCookie, value: "a=1"))
        fields.append(HTTPField(name: .setCookie, value: "b=2; Path=/x"))
        let lines = redaction.redacted(fields).map { "\($0.name): \($0.value)" }
        #expect(lines == ["Accept: */*", "Set-Cookie: a=<redacted>", "Set-Cookie: b=<redacted>; Path=/x"])
    }

    @Test func urlPasswordsAreHidden() throws {
        #expect(
            redaction.redacted(try #require(URL(string: "http://user:pa55@127.0.0.1:8080/p?q=1")))
                == "http://user:%3Credacted%3E@127.0.0.1:8080/p?q=1")
        #expect(redaction.redacted(try #require(URL(string: "http://127.0.0.1/p"))) == "http://127.0.0.1/p")
    }

    @Test func loggerNeverPrintsSecrets() throws {
        let storage = NIOLockedValueBox<[RecordingLogHandler.Entry]>([])
        let logger = Logger(label: "courier.test") { _ in RecordingLogHandler(storage: storage) }
        var request = Request(method: .post, url: try #require(URL(string: "http://me:hunter2@127.0.0.1:8080/login")))
        try request.setValue("Bearer top-secret-token", forHTTPHeaderField: "Authorization")
        try request.setValue("sid=cookie-secret", forHTTPHeaderField: "Cookie")
        try request.setValue("Basic cHJveHk6c2VjcmV0", forHTTPHeaderField: "Proxy-Authorization")
        try request.setValue("application/json", forHTTPHeaderField: "Accept")
        logger.logRequest(request, level: .info)
        var fields = HTTPFields()
        fields[.setCookie] = "sid=new-cookie-secret; Path=/"
        logger.logResponse(ResponseHead(status: .ok, headerFields: fields, url: request.url), level: .info)

        let entries = storage.withLockedValue { $0 }
        #expect(entries.count == 2)
        let printed = entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        for secret in ["top-secret-token", "cookie-secret", "cHJveHk6c2VjcmV0", "hunter2", "new-cookie-secret"] {
            #expect(!printed.contains(secret), "log leaked \(secret)")
        }
        #expect(entries[0].message == "→ POST http://me:%3Credacted%3E@127.0.0.1:8080/login")
        #expect(printed.contains("Authorization: Bearer <redacted>"))
        #expect(printed.contains("Accept: application/json"))
        #expect(entries[1].message == "← 200 http://me:%3Credacted%3E@127.0.0.1:8080/login")
        #expect(printed.contains("Set-Cookie: sid=<redacted>; Path=/"))
    }

    @Test func belowTheLogLevelNothingIsFormatted() {
        let storage = NIOLockedValueBox<[RecordingLogHandler.Entry]>([])
        var logger = Logger(label: "courier.test") { _ in RecordingLogHandler(storage: storage) }
        logger.logLevel = .info
        logger.logRequest(Request(url: ResponseFixture.url))
        #expect(storage.withLockedValue { $0.isEmpty })
    }
}

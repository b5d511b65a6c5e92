import Courier
import CourierTestServer
import Foundation
import Logging
import Testing

/// One debug line per attempt from `SessionManager.Configuration.logger`, tied together by a
/// request identifier, with credentials redacted.
@Suite(.timeLimit(.minutes(3)))
struct AttemptLoggingTests {
    private func logger(_ store: CapturingLogHandler.Store, level: Logger.Level = .debug) -> Logger {
        var logger = Logger(label: "courier.test") { _ in CapturingLogHandler(store: store) }
        logger.logLevel = level
        return logger
    }

    @Test func oneLinePerAttemptWithOneRequestIdentifier() async throws {
        let store = CapturingLogHandler.Store()
        try await withObservedSession(configure: { $0.logger = logger(store) }) { server, manager in
            _ = try await manager.data(for: Request(url: serverURL(server, "/redirect/1")))
            _ = try await manager.data(for: Request(url: serverURL(server, "/get")))
            let lines = store.all
            #expect(lines.count == 3)
            #expect(lines.allSatisfy { $0.level == .debug })
            let ids = lines.map { $0.metadata["courier.request.id"]?.description }
            #expect(ids[0] != nil && ids[0] == ids[1])
            #expect(ids[2] != ids[0])
            #expect(lines[0].message.contains("/redirect/1 → 302"))
            #expect(lines[1].message.contains("/get → 200"))
            #expect(lines[1].metadata["http.request.resend_count"]?.description == "1")
            #expect(lines[0].metadata["http.response.status_code"]?.description == "302")
        }
    }

    @Test func credentialsAreRedactedInEveryLine() async throws {
        let store = CapturingLogHandler.Store()
        try await withObservedSession(configure: { $0.logger = logger(store) }) { server, manager in
            let url = URL(string: "http://ann:hunter2@127.0.0.1:\(server.port)/get?token=s3cr3t")!
            var request = Request(url: url)
            request.headerFields[.authorization] = "Bearer t0ken"
            request.headerFields[.cookie] = "session=c00kie"
            _ = try await manager.data(for: request)
            let lines = store.all
            #expect(lines.count == 1)
            for line in lines {
                let text = line.message + " " + line.metadata.description
                for secret in ["hunter2", "s3cr3t", "t0ken", "c00kie"] {
                    #expect(!text.contains(secret), "\(secret) in \(text)")
                }
                #expect(text.contains("Authorization: Bearer <redacted>"))
                #expect(text.contains("session=<redacted>"))
            }
        }
    }

    @Test func aLoggerAboveDebugLogsNothing() async throws {
        let store = CapturingLogHandler.Store()
        try await withObservedSession(configure: { $0.logger = logger(store, level: .info) }) { server, manager in
            _ = try await manager.data(for: Request(url: serverURL(server, "/get")))
            #expect(store.all.isEmpty)
        }
    }
}

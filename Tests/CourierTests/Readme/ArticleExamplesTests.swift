import Courier
import CourierTestServer
import Foundation
import Logging
import Testing

/// The examples of the DocC articles Caching, Authentication, Streams and Server-Sent Events and
/// Observability (Sources/Courier/Courier.docc), run as written against the in-process test
/// server (only the host differs), so that the articles cannot drift from the API.
@Suite(.timeLimit(.minutes(3))) struct ArticleExamplesTests {
    @Test func caching() async throws {
        let server = try await TestServer.start()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("api-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }

        var configuration = SessionManager.Configuration()
        configuration.cache = try HTTPCache(memoryCapacity: 8 << 20, directory: directory, diskCapacity: 64 << 20)
        let api = HTTPSessionManager(baseURL: server.baseURL, configuration: configuration)

        let first = try await api.get("cache/60", as: [String: String].self)
        let second = try await api.get("cache/60", as: [String: String].self)
        #expect(first.response.headerFields[.age] == nil)
        #expect(second.response.headerFields[.age] != nil)
        #expect(second.data == first.data)

        var request = Request(url: server.baseURL.appendingPathComponent("cache/60"))
        request.cachePolicy = .onlyIfCached
        let cached = try await api.session.data(for: request)
        #expect(cached.response.statusCode == 200)
        #expect(cached.response.headerFields[.age] != nil)

        var missing = Request(url: server.baseURL.appendingPathComponent("cache/61"))
        missing.cachePolicy = .onlyIfCached
        let miss = await #expect(throws: CourierError.self) { try await api.session.data(for: missing) }
        #expect(miss?.code == .cacheMiss)
        try await server.shutdown()
    }

    @Test func basicAuthentication() async throws {
        let server = try await TestServer.start()
        let api = HTTPSessionManager(baseURL: server.baseURL)
        var serializer = HTTPRequestSerializer()
        serializer.setAuthorizationHeader(username: "ann", password: "secret")
        api.requestSerializer = serializer
        let answer = try await api.get("basic-auth/ann/secret", as: [String: JSONValue].self)
        #expect(answer.value["authenticated"] == .bool(true))
        try await server.shutdown()
    }

    /// The article's authenticator, with the realm of this run instead of "docs".
    struct Token: AuthenticationCredential {
        var value: String
        var expiry: Date
        var requiresRefresh: Bool { expiry < Date(timeIntervalSinceNow: 60) }
    }

    struct TokenService: Authenticator {
        let tokens: HTTPSessionManager
        let realm: String

        func apply(_ token: Token, to request: inout Request) {
            request.headerFields[.authorization] = "Bearer \(token.value)"
        }

        func refresh(_ token: Token) async throws -> Token {
            struct Issued: Decodable, Sendable { var token: String }
            let issued = try await tokens.post(
                "auth/token?realm=\(realm)", .json(["old": token.value]), as: Issued.self)
            return Token(value: issued.value.token, expiry: Date(timeIntervalSinceNow: 3600))
        }

        func didRequest(
            _ request: Request, with response: ResponseHead, failDueToAuthenticationError error: (any Error)?
        ) -> Bool {
            response.statusCode == 401
        }

        func isRequest(_ request: Request, authenticatedWith token: Token) -> Bool {
            request.headerFields[.authorization] == "Bearer \(token.value)"
        }
    }

    @Test func tokenRefresh() async throws {
        let server = try await TestServer.start()
        let realm = UUID().uuidString
        let base: URL? = server.baseURL
        let authenticator = TokenService(tokens: HTTPSessionManager(baseURL: base), realm: realm)
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator, credential: Token(value: "expired", expiry: .distantPast))
        let api = HTTPSessionManager(baseURL: base, interceptor: interceptor)
        let me = try await api.get("auth/protected?realm=\(realm)", as: [String: JSONValue].self)
        #expect(me.value["authenticated"] == .bool(true))
        #expect(interceptor.credential?.value != "expired")
        try await server.shutdown()
    }

    @Test func digestAuthenticatorAsWritten() throws {
        // The article's intranet needs a server with Digest; this checks that the code compiles
        // and makes a manager as written.
        let digest = DigestAuthenticator(
            user: "ann", password: "secret", origins: [URL(string: "https://intranet.example.com")!])
        let intranet = HTTPSessionManager(baseURL: URL(string: "https://intranet.example.com/"), interceptor: digest)
        #expect(intranet.baseURL?.absoluteString == "https://intranet.example.com/")
    }

    struct Item: Decodable, Sendable { var id: Int; var name: String }

    @Test func streamsAndServerSentEvents() async throws {
        let server = try await TestServer.start()
        let api = HTTPSessionManager(baseURL: server.baseURL)

        let feed = try await api.get.stream("ndjson", parameters: ["count": 3])
        var items: [String] = []
        for try await item in feed.jsonLines(of: Item.self) {
            items.append("\(item.id) \(item.name)")
        }
        #expect(items == ["1 item 1", "2 item 2", "3 item 3"])

        let events = try await api.get.stream("sse", parameters: ["count": 2])
        var received: [String] = []
        for try await event in events.serverSentEvents() {
            received.append("\(event.lastEventID) \(event.data)")
        }
        #expect(received == ["1 event 1", "2 event 2"])

        // The article's EventSource waits the default 3 s before it reconnects; a `retry: 10`
        // block (the stream's own reconnection time) keeps the test short, as a server may.
        let source = try api.eventSource("sse", parameters: ["count": 5, "drop_after": 2, "retry": 10])
        var resumed: [String] = []
        for try await event in source {
            resumed.append(event.lastEventID)
        }
        #expect(resumed == ["1", "2", "3", "4", "5"])
        try await server.shutdown()
    }

    @Test func observability() async throws {
        let server = try await TestServer.start()
        var configuration = SessionManager.Configuration()
        // The article's `Logger(label: "api")`, with its lines kept instead of printed.
        let lines = CapturingLogHandler.Store()
        configuration.logger = Logger(label: "api") { _ in CapturingLogHandler(store: lines) }
        configuration.logger.logLevel = .debug
        configuration.redaction = HeaderRedaction(additionalFieldNames: ["X-API-Key"])
        let manager = SessionManager(configuration: configuration)

        let response = try await manager.data(for: Request(url: server.baseURL.appendingPathComponent("redirect/1")))
        let attempts = response.metrics.attempts
        #expect(attempts.map(\.reason) == [.initial, .redirect])
        #expect(attempts.map(\.statusCode) == [302, 200])
        #expect(attempts.allSatisfy { $0.duration != nil })
        #expect(lines.all.filter { $0.level == .debug }.count == 2)
        #expect(configuration.redaction.redactedValue("k", forField: "x-api-key") == HeaderRedaction.placeholder)
        try await server.shutdown()
    }
}

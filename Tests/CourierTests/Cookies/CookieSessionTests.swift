import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import CourierCore

/// Cookie handling through ``SessionManager``: against the in-process test server, and against a
/// scripted transport for redirects between hosts (which loopback alone cannot name).
@Suite("Cookies through the session", .timeLimit(.minutes(3)))
struct CookieSessionTests {
    func cookiesEchoed(_ response: SessionResponse) throws -> [String: String] {
        let object = try jsonObject(response.data)
        return try #require(object["cookies"] as? [String: String])
    }

    @Test func setCookieOnARedirectReachesTheNextHop() async throws {
        try await withSession { server, manager, _ in
            let response = try await manager.data(for: Request(url: server.url("/cookies/set?name=value&other=2")))
            #expect(response.response.url.path == "/cookies")
            #expect(try cookiesEchoed(response) == ["name": "value", "other": "2"])
            let jar = try #require(manager.configuration.cookieStorage as? CookieJar)
            let stored = jar.allCookies
            #expect(stored.map(\.name) == ["name", "other"])
            #expect(stored.allSatisfy { $0.domain == "127.0.0.1" && $0.hostOnly && $0.path == "/" })

            // Later requests carry them too, and a deletion removes them.
            let again = try await manager.data(for: Request(url: server.url("/cookies")))
            #expect(try cookiesEchoed(again) == ["name": "value", "other": "2"])
            let deleted = try await manager.data(for: Request(url: server.url("/cookies/delete?name")))
            #expect(try cookiesEchoed(deleted) == ["other": "2"])
            #expect(jar.allCookies.map(\.name) == ["other"])
        }
    }

    @Test func httpShouldHandleCookiesFalseNeitherSendsNorStores() async throws {
        try await withSession { server, manager, _ in
            _ = try await manager.data(for: Request(url: server.url("/cookies/set?kept=1")))
            var plain = Request(url: server.url("/cookies"))
            plain.httpShouldHandleCookies = false
            #expect(try cookiesEchoed(try await manager.data(for: plain)) == [:])

            var setting = Request(url: server.url("/cookies/set?ignored=1"))
            setting.httpShouldHandleCookies = false
            #expect(try cookiesEchoed(try await manager.data(for: setting)) == [:])
            let jar = try #require(manager.configuration.cookieStorage as? CookieJar)
            #expect(jar.allCookies.map(\.name) == ["kept"])
        }
    }

    @Test func nilStorageDisablesCookies() async throws {
        try await withSession(configure: { $0.cookieStorage = nil }) { server, manager, _ in
            let response = try await manager.data(for: Request(url: server.url("/cookies/set?a=b")))
            #expect(try cookiesEchoed(response) == [:])
        }
    }

    @Test func aCallerSetCookieHeaderWins() async throws {
        try await withSession { server, manager, _ in
            _ = try await manager.data(for: Request(url: server.url("/cookies/set?stored=1")))
            var request = Request(url: server.url("/cookies"))
            try request.setValue("mine=2", forHTTPHeaderField: "Cookie")
            #expect(try cookiesEchoed(try await manager.data(for: request)) == ["mine": "2"])
        }
    }

    @Test func eachManagerHasItsOwnJarAndAJarCanBeShared() async throws {
        let shared = CookieJar()
        try await withSession(configure: { $0.cookieStorage = shared }) { server, manager, _ in
            _ = try await manager.data(for: Request(url: server.url("/cookies/set?s=1")))
            let isolated = SessionManager()
            var sharing = SessionManager.Configuration()
            sharing.cookieStorage = shared
            let second = SessionManager(configuration: sharing)
            let isolatedEcho = try await isolated.data(for: Request(url: server.url("/cookies")))
            let sharedEcho = try await second.data(for: Request(url: server.url("/cookies")))
            try await isolated.shutdown()
            try await second.shutdown()
            #expect(try cookiesEchoed(isolatedEcho) == [:])
            #expect(try cookiesEchoed(sharedEcho) == ["s": "1"])
        }
    }

    @Test func httpSessionManagerKeepsCookies() async throws {
        let server = try await TestServer.start()
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        do {
            let response = try await manager.get("cookies/set", parameters: ["k": "v"])
            #expect((response.value as? Courier.JSONValue)?["cookies"]?["k"] == "v")
        } catch {
            Issue.record(error)
        }
        try await manager.shutdown()
        try await server.shutdown()
    }

    @Test func cookiesGoOutAsOneCookieLine() async throws {
        try await withSession { server, manager, _ in
            _ = try await manager.data(for: Request(url: server.url("/cookies/set?a=1&b=2")))
            // /headers folds repeated lines with ",", as httpbin does: one line stays intact.
            let stored = try jsonObject(try await manager.data(for: Request(url: server.url("/headers"))).data)
            #expect((stored["headers"] as? [String: String])?["Cookie"] == "a=1; b=2")
            var manual = Request(url: server.url("/headers"))
            try manual.setValue("x=1; y=2; z=3", forHTTPHeaderField: "Cookie")
            let echoed = try jsonObject(try await manager.data(for: manual).data)
            #expect((echoed["headers"] as? [String: String])?["Cookie"] == "x=1; y=2; z=3")
        }
    }

    // MARK: Redirects between hosts (scripted transport)

    @Test func crossHostRedirectsSendEachHostItsOwnCookies() async throws {
        let transport = CookieScriptTransport { request in
            switch (request.url.host ?? "", request.url.path) {
            case ("a.example.test", "/login"):
                return (
                    302,
                    [
                        (.setCookie, "sid=1; Path=/"), (.setCookie, "shared=2; Domain=example.test; Path=/"),
                        (.location, "http://b.example.test/landing"),
                    ]
                )
            case ("b.example.test", "/landing"):
                return (302, [(.setCookie, "b=3; Path=/"), (.location, "http://a.example.test/home")])
            case ("a.example.test", "/home"):
                return (302, [(.location, "/done")])
            default:
                return (200, [])
            }
        }
        let manager = SessionManager(transport: transport)
        var request = Request(url: URL(string: "http://a.example.test/login")!)
        try request.setValue("manual=1", forHTTPHeaderField: "Cookie")
        let response = try await manager.data(for: request)
        try await manager.shutdown()
        #expect(response.response.statusCode == 200)
        #expect(
            transport.sent == [
                "http://a.example.test/login Cookie: manual=1",
                // The redirect left the origin: the caller's header is dropped, the jar applies.
                "http://b.example.test/landing Cookie: shared=2",
                "http://a.example.test/home Cookie: sid=1; shared=2",
                "http://a.example.test/done Cookie: sid=1; shared=2",
            ])
        #expect(response.request.headerFields[.cookie] == nil, "stored cookies are added per hop, not kept")
    }

    @Test func sameOriginRedirectKeepsTheCallersHeader() async throws {
        let transport = CookieScriptTransport { request in
            request.url.path == "/start"
                ? (307, [(.setCookie, "jar=1"), (.location, "/next")])
                : (200, [])
        }
        let manager = SessionManager(transport: transport)
        var request = Request(url: URL(string: "http://a.example.test/start")!)
        try request.setValue("manual=1", forHTTPHeaderField: "Cookie")
        _ = try await manager.data(for: request)
        try await manager.shutdown()
        #expect(
            transport.sent == [
                "http://a.example.test/start Cookie: manual=1", "http://a.example.test/next Cookie: manual=1",
            ])
    }

    @Test func secureCookiesStayOnHTTPS() async throws {
        let transport = CookieScriptTransport { request in
            request.url.path == "/set"
                ? (
                    302,
                    [
                        (.setCookie, "s=1; Secure; Path=/"), (.setCookie, "p=2; Path=/"),
                        (.location, "http://h.example.test/plain"),
                    ]
                )
                : (request.url.path == "/plain" ? (302, [(.location, "https://h.example.test/secure")]) : (200, []))
        }
        let manager = SessionManager(transport: transport)
        _ = try await manager.data(for: Request(url: URL(string: "https://h.example.test/set")!))
        try await manager.shutdown()
        #expect(
            transport.sent == [
                "https://h.example.test/set Cookie: -", "http://h.example.test/plain Cookie: p=2",
                "https://h.example.test/secure Cookie: s=1; p=2",
            ])
    }
}

/// Answers each request from a script and records the URL and `Cookie` header it was sent with.
final class CookieScriptTransport: Transport {
    typealias Script = @Sendable (Request) -> (Int, [(HTTPField.Name, String)])
    private let script: Script
    private let log = Recorder<String>()

    init(_ script: @escaping Script) { self.script = script }

    var sent: [String] { log.values }

    func send(_ request: Request, context: ExchangeContext) async throws -> TransportResponse {
        log.append("\(request.url.absoluteString) Cookie: \(request.headerFields[.cookie] ?? "-")")
        let (status, headers) = script(request)
        var fields = HTTPFields()
        for (name, value) in headers { fields.append(HTTPField(name: name, value: value)) }
        let head = ResponseHead(status: HTTPResponse.Status(code: status), headerFields: fields, url: request.url)
        return TransportResponse(head: head, body: BodyChunks(makeNext: { { nil } }))
    }

    func shutdown() async throws {}
}

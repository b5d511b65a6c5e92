import AsyncHTTPClient
import CourierTestServer
import NIOHTTP1
import Testing

@Suite("Test server: status and redirects", .timeLimit(.minutes(3)))
struct RedirectEndpointTests {
    private func location(_ server: TestServer, _ path: String) async throws -> String? {
        let reply = try await TestServerHarness.fetch(server, path)
        return reply.headers.first(name: "Location")
    }

    @Test func singleStatusCodes() async throws {
        try await TestServerHarness.withServer { server async throws in
            for code in [200, 201, 204, 400, 404, 418, 500, 503] {
                #expect(try await TestServerHarness.fetch(server, "/status/\(code)").status.code == code)
            }
            let unauthorized = try await TestServerHarness.fetch(server, "/status/401")
            #expect(unauthorized.headers.first(name: "WWW-Authenticate") == "Basic realm=\"Fake Realm\"")
            #expect(try await TestServerHarness.fetch(server, "/status/abc").status == .badRequest)
            #expect(try await TestServerHarness.fetch(server, "/status/101").status == .badRequest)
            let noContent = try await TestServerHarness.fetch(server, "/status/204")
            #expect(noContent.headers.first(name: "Content-Length") == nil)
        }
    }

    @Test func statusListDrawIsRepeatableWithSeed() async throws {
        try await TestServerHarness.withServer { server async throws in
            var seen: Set<UInt> = []
            for seed in 0..<40 {
                let first = try await TestServerHarness.fetch(server, "/status/200,201,202?seed=\(seed)").status.code
                let again = try await TestServerHarness.fetch(server, "/status/200,201,202?seed=\(seed)").status.code
                #expect(first == again)
                seen.insert(first)
            }
            #expect(seen == [200, 201, 202])
            #expect(try await TestServerHarness.fetch(server, "/status/500:0,204:1").status == .noContent)
        }
    }

    @Test func redirectToUsesGivenURLAndStatusForAnyMethod() async throws {
        try await TestServerHarness.withServer { server async throws in
            let plain = try await TestServerHarness.fetch(server, "/redirect-to?url=%2Fget%3Fa%3D1")
            #expect(plain.status == .found)
            #expect(plain.headers.first(name: "Location") == "/get?a=1")
            for code in [301, 302, 303, 307, 308] {
                let reply = try await TestServerHarness.fetch(
                    server, "/redirect-to?url=http%3A%2F%2F127.0.0.1%2Fpost&status_code=\(code)", method: .POST,
                    body: [1, 2, 3])
                #expect(reply.status.code == code)
                #expect(reply.headers.first(name: "Location") == "http://127.0.0.1/post")
            }
            #expect(
                try await TestServerHarness.fetch(server, "/redirect-to?url=x&status_code=200").status == .badRequest)
            #expect(
                try await TestServerHarness.fetch(server, "/redirect-to?url=a%0D%0AX-Injected:%201").status
                    == .badRequest)
        }
    }

    @Test func redirectChains() async throws {
        try await TestServerHarness.withServer { server async throws in
            let base = "http://127.0.0.1:\(server.port)"
            #expect(try await location(server, "/redirect/3") == "/relative-redirect/2")
            #expect(try await location(server, "/redirect/1") == "/get")
            #expect(try await location(server, "/relative-redirect/2") == "/relative-redirect/1")
            #expect(try await location(server, "/absolute-redirect/2") == "\(base)/absolute-redirect/1")
            #expect(try await location(server, "/absolute-redirect/1") == "\(base)/get")
            #expect(try await location(server, "/redirect/2?absolute=true") == "\(base)/absolute-redirect/1")
        }
    }
}

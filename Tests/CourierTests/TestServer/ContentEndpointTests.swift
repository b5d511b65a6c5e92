import AsyncHTTPClient
import CourierTestServer
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

@Suite("Test server: content, auth, cookies, compression", .timeLimit(.minutes(3)))
struct ContentEndpointTests {
    @Test func fixedDocuments() async throws {
        try await TestServerHarness.withServer { server async throws in
            let html = try await TestServerHarness.fetch(server, "/html")
            #expect(html.headers.first(name: "Content-Type") == "text/html; charset=utf-8")
            #expect(html.text.contains("<h1>Courier</h1>"))
            let json = try await TestServerHarness.fetch(server, "/json").json()
            #expect(json["slideshow"]?["title"] == "Sample Slide Show")
            let xml = try await TestServerHarness.fetch(server, "/xml")
            #expect(xml.headers.first(name: "Content-Type") == "application/xml")
            #expect(xml.text.hasPrefix("<?xml"))
            let utf8 = try await TestServerHarness.fetch(server, "/encoding/utf8")
            #expect(utf8.text.contains("こんにちは世界"))
            let decoded = try await TestServerHarness.fetch(server, "/base64/SFRUUEJJTiBpcyBhd2Vzb21l")
            #expect(decoded.text == "HTTPBIN is awesome")
        }
    }

    @Test func basicAuthAcceptsOnlyTheRightCredentials() async throws {
        try await TestServerHarness.withServer { server async throws in
            let good = "Basic " + Data("user:pa ss".utf8).base64EncodedString()
            let ok = try await TestServerHarness.fetch(
                server, "/basic-auth/user/pa%20ss", headers: [("Authorization", good)])
            #expect(ok.status == .ok)
            #expect(try ok.json() == ["authenticated": true, "user": "user"])
            let bad = "Basic " + Data("user:wrong".utf8).base64EncodedString()
            let denied = try await TestServerHarness.fetch(
                server, "/basic-auth/user/pa%20ss", headers: [("Authorization", bad)])
            #expect(denied.status == .unauthorized)
            #expect(denied.headers.first(name: "WWW-Authenticate") == "Basic realm=\"Fake Realm\"")
            let missing = try await TestServerHarness.fetch(server, "/hidden-basic-auth/u/p")
            #expect(missing.status == .notFound)
            let bearer = try await TestServerHarness.fetch(
                server, "/bearer", headers: [("Authorization", "Bearer t0k")])
            #expect(try bearer.json() == ["authenticated": true, "token": "t0k"])
            let noBearer = try await TestServerHarness.fetch(server, "/bearer")
            #expect(noBearer.status == .unauthorized)
        }
    }

    @Test func cookiesEchoSetAndDelete() async throws {
        try await TestServerHarness.withServer { server async throws in
            let echo = try await TestServerHarness.fetch(server, "/cookies", headers: [("Cookie", "a=1; b=two,three")])
            #expect(try echo.json() == ["cookies": ["a": "1", "b": "two,three"]])
            let set = try await TestServerHarness.fetch(server, "/cookies/set?k=v&x=y")
            #expect(set.status == .found)
            #expect(set.headers.first(name: "Location") == "/cookies")
            #expect(set.headers["Set-Cookie"] == ["k=v; Path=/", "x=y; Path=/"])
            let path = try await TestServerHarness.fetch(server, "/cookies/set/name/value")
            #expect(path.headers["Set-Cookie"] == ["name=value; Path=/"])
            let delete = try await TestServerHarness.fetch(server, "/cookies/delete?k")
            #expect(delete.headers.first(name: "Set-Cookie")?.hasPrefix("k=; Expires=Thu, 01 Jan 1970") == true)
            let injected = try await TestServerHarness.fetch(server, "/cookies/set?k=a%0D%0AX:1")
            #expect(injected.status == .badRequest)
        }
    }

    @Test func responseHeadersAreSentAndEchoed() async throws {
        try await TestServerHarness.withServer { server async throws in
            let reply = try await TestServerHarness.fetch(server, "/response-headers?X-One=1&X-Many=a&X-Many=b")
            #expect(reply.headers.first(name: "X-One") == "1")
            #expect(reply.headers["X-Many"] == ["a", "b"])
            let json = try reply.json()
            #expect(json["X-Many"] == ["a", "b"])
            #expect(json["Content-Type"] == "application/json")
            let typed = try await TestServerHarness.fetch(server, "/response-headers?Content-Type=text/csv")
            #expect(typed.headers["Content-Type"] == ["text/csv"])
            let injected = try await TestServerHarness.fetch(server, "/response-headers?X-A=1%0D%0AX-B:2")
            #expect(injected.status == .badRequest)
        }
    }

    @Test func gzipAndDeflateDecodeWithAnIndependentInflater() async throws {
        try await TestServerHarness.withServer { server async throws in
            var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
            configuration.decompression = .enabled(limit: .none)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            // Shut the client down on every path: an HTTPClient dropped unshut traps the process.
            do {
                let gzip = try await TestServerHarness.fetch(server, "/gzip", client: client).json()
                #expect(gzip["gzipped"] == true)
                #expect(gzip["method"] == "GET")
                let deflate = try await TestServerHarness.fetch(server, "/deflate", client: client).json()
                #expect(deflate["deflated"] == true)

                let raw = try await TestServerHarness.fetch(server, "/gzip")
                #expect(raw.headers.first(name: "Content-Encoding") == "gzip")
                #expect(Array(raw.bytes.prefix(2)) == [0x1F, 0x8B])
            } catch {
                try? await client.shutdown()
                throw error
            }
            try await client.shutdown()
        }
    }

    @Test func tlsServesHTTPS() async throws {
        let certificates = try TestCertificates.shared.get()
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(certificates.selfSigned.certificate)],
            privateKey: .privateKey(certificates.selfSigned.key))
        tls.minimumTLSVersion = .tlsv12
        let server = try await TestServer.start(tls: try NIOSSLContext(configuration: tls))
        #expect(server.baseURL.absoluteString == "https://127.0.0.1:\(server.port)")
        var clientTLS = TLSConfiguration.makeClientConfiguration()
        clientTLS.trustRoots = .certificates([certificates.selfSigned.certificate])
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: clientTLS))
        do {
            let json = try await TestServerHarness.fetch(server, "/get?tls=1", client: client).json()
            #expect(json["url"]?.stringValue == "https://127.0.0.1:\(server.port)/get?tls=1")
            let body = TestServer.expectedBytes(count: 100_000, seed: 1)
            let upload = try await TestServerHarness.fetch(server, "/upload", method: .POST, body: body, client: client)
                .json()
            #expect(upload["sha256"]?.stringValue == sha256Hex(body))
        } catch {
            try? await client.shutdown()
            try? await server.shutdown()
            throw error
        }
        try await client.shutdown()
        try await server.shutdown()
    }
}

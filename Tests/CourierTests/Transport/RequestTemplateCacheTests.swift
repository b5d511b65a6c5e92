import AsyncHTTPClient
import Courier
import CourierTestServer
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

@Suite("Transport: the delegate path reuses a parsed URL only for the same URL and method", .timeLimit(.minutes(3)))
struct RequestTemplateCacheTests {
    @Test("A reused template carries this call's headers and body, never the last one's")
    func reuseKeepsOnlyTheURL() throws {
        let cache = RequestTemplateCache()
        let url = try #require(URL(string: "http://127.0.0.1:9/a?x=1"))
        let first = try cache.request(url: url, method: .GET, headers: ["X-N": "1"], body: .string("one"))
        let second = try cache.request(url: url, method: .GET, headers: ["X-N": "2"], body: nil)
        #expect(first.headers["X-N"] == ["1"])
        #expect(first.body != nil)
        #expect(second.headers["X-N"] == ["2"])
        #expect(second.body == nil)
        #expect(second.url == url)
        #expect(second.method == .GET)
    }

    @Test("Another method or URL builds a new request")
    func otherMethodOrURL() throws {
        let cache = RequestTemplateCache()
        let a = try #require(URL(string: "http://127.0.0.1:9/a"))
        let b = try #require(URL(string: "http://localhost:9/b"))
        _ = try cache.request(url: a, method: .GET, headers: [:], body: nil)
        let post = try cache.request(url: a, method: .POST, headers: [:], body: nil)
        #expect(post.method == .POST)
        #expect(post.url == a)
        let other = try cache.request(url: b, method: .POST, headers: [:], body: nil)
        #expect(other.url == b)
        #expect(other.host == "localhost")
        #expect(other.port == 9)
    }

    @Test("A URL AsyncHTTPClient refuses still throws, and leaves the cache usable")
    func refusedURL() throws {
        let cache = RequestTemplateCache()
        let refused = try #require(URL(string: "ftp://127.0.0.1/file"))
        #expect(throws: HTTPClientError.self) {
            _ = try cache.request(url: refused, method: .GET, headers: [:], body: nil)
        }
        let good = try #require(URL(string: "http://127.0.0.1:9/"))
        #expect(try cache.request(url: good, method: .GET, headers: [:], body: nil).url == good)
    }

    @Test("Exchanges alternating URLs and headers on one transport each send their own")
    func alternatingExchanges() async throws {
        let transport = AsyncHTTPClientTransport()
        let server = try await TestServer.start()
        let manager = SessionManager(transport: transport)
        do {
            for index in 0..<6 {
                let path = index.isMultiple(of: 2) ? "/get" : "/get?n=\(index)"
                var request = Request(url: server.url(path))
                request.headerFields[.init("X-N")!] = String(index)
                let response = try await manager.data(for: request)
                let echo = try #require(try JSONSerialization.jsonObject(with: response.data) as? [String: Any])
                let headers = try #require(echo["headers"] as? [String: Any])
                #expect(headers["X-N"] as? String == String(index))
                #expect((echo["url"] as? String)?.hasSuffix(path) == true)
            }
        } catch {
            try? await server.shutdown()
            try? await transport.shutdown()
            throw error
        }
        try await server.shutdown()
        try await transport.shutdown()
    }
}

import AsyncHTTPClient
import CourierTestServer
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@Suite("Test server: echo endpoints", .timeLimit(.minutes(3)))
struct EchoEndpointTests {
    @Test func getEchoesArgsHeadersOriginAndURL() async throws {
        try await TestServerHarness.withServer { server async throws in
            let reply = try await TestServerHarness.fetch(
                server, "/get?a=1&b=two+words&a=3", headers: [("x-custom-thing", "v")])
            #expect(reply.status == .ok)
            #expect(reply.headers.first(name: "Content-Type") == "application/json")
            let json = try reply.json()
            #expect(Set(try #require(json.objectValue).keys) == ["args", "headers", "origin", "url"])
            #expect(json["args"] == ["a": ["1", "3"], "b": "two words"])
            #expect(json["headers"]?["X-Custom-Thing"] == "v")
            #expect(json["origin"] == "127.0.0.1")
            #expect(json["url"]?.stringValue == "http://127.0.0.1:\(server.port)/get?a=1&b=two+words&a=3")
        }
    }

    @Test func postWithJSONFillsJsonAndData() async throws {
        try await TestServerHarness.withServer { server async throws in
            let body = Array(#"{"k":[1,2.5,"s",null,true]}"#.utf8)
            let reply = try await TestServerHarness.fetch(
                server, "/post", method: .POST, headers: [("Content-Type", "application/json")], body: body)
            let json = try reply.json()
            #expect(
                Set(try #require(json.objectValue).keys) == [
                    "args", "data", "files", "form", "headers", "json", "origin", "url",
                ])
            #expect(json["json"] == ["k": [1, .double(2.5), "s", nil, true]])
            #expect(json["data"]?.stringValue == #"{"k":[1,2.5,"s",null,true]}"#)
            #expect(json["form"] == [:])
            #expect(json["files"] == [:])
        }
    }

    @Test func urlencodedBodyFillsForm() async throws {
        try await TestServerHarness.withServer { server async throws in
            let reply = try await TestServerHarness.fetch(
                server, "/put", method: .PUT, headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Array("name=J%C3%BCrgen+M&tag=a&tag=b&empty=".utf8))
            let json = try reply.json()
            #expect(json["form"] == ["name": "Jürgen M", "tag": ["a", "b"], "empty": ""])
            #expect(json["data"] == "")
            #expect(json["json"] == .null)
        }
    }

    @Test func multipartBodyFillsFormAndFiles() async throws {
        try await TestServerHarness.withServer { server async throws in
            let body =
                "--XyZ\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nvalue 1\r\n"
                + "--XyZ\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nfile\r\ncontent\r\n"
                + "--XyZ--\r\n"
            let reply = try await TestServerHarness.fetch(
                server, "/patch", method: .PATCH, headers: [("Content-Type", "multipart/form-data; boundary=XyZ")],
                body: Array(body.utf8))
            let json = try reply.json()
            #expect(json["form"] == ["field": "value 1"])
            #expect(json["files"] == ["upload": "file\r\ncontent"])
            #expect(json["error"] == nil)
        }
    }

    @Test func anythingReportsMethodForEveryVerbAndSubpath() async throws {
        try await TestServerHarness.withServer { server async throws in
            for method in [HTTPMethod.GET, .POST, .PUT, .DELETE, .PATCH, .OPTIONS] {
                let reply = try await TestServerHarness.fetch(server, "/anything/x/y?q=1", method: method)
                let json = try reply.json()
                #expect(json["method"]?.stringValue == method.rawValue)
                #expect(json["args"] == ["q": "1"])
            }
        }
    }

    @Test func wrongMethodIs405WithAllow() async throws {
        try await TestServerHarness.withServer { server async throws in
            let reply = try await TestServerHarness.fetch(server, "/post")
            #expect(reply.status == .methodNotAllowed)
            #expect(reply.headers.first(name: "Allow") == "POST")
            let head = try await TestServerHarness.fetch(server, "/get", method: .HEAD)
            #expect(head.status == .ok)
            #expect(head.body.readableBytes == 0)
        }
    }

    @Test func headersIPUserAgentUUID() async throws {
        try await TestServerHarness.withServer { server async throws in
            let headers = try await TestServerHarness.fetch(
                server, "/headers", headers: [("User-Agent", "courier-test/1")]
            ).json()
            #expect(headers["headers"]?["User-Agent"] == "courier-test/1")
            #expect(try await TestServerHarness.fetch(server, "/ip").json() == ["origin": "127.0.0.1"])
            let userAgent = try await TestServerHarness.fetch(server, "/user-agent", headers: [("User-Agent", "ua")])
            #expect(try userAgent.json() == ["user-agent": "ua"])
            let uuid = try await TestServerHarness.fetch(server, "/uuid").json()["uuid"]?.stringValue
            #expect(UUID(uuidString: try #require(uuid)) != nil)
        }
    }

    @Test func delayAnswersWithTheEchoDocument() async throws {
        try await TestServerHarness.withServer { server async throws in
            let json = try await TestServerHarness.fetch(server, "/delay/0.01?x=1").json()
            #expect(json["args"] == ["x": "1"])
        }
    }

    @Test func unknownPathIs404() async throws {
        try await TestServerHarness.withServer { server async throws in
            #expect(try await TestServerHarness.fetch(server, "/nope").status == .notFound)
        }
    }

    @Test func statsRecordTheLastRawHead() async throws {
        try await TestServerHarness.withServer { server async throws in
            _ = try await TestServerHarness.fetch(server, "/get?z=9", headers: [("X-Trace", "abc")])
            let stats = server.stats
            #expect(stats.connectionsAccepted >= 1)
            #expect(stats.requestsServed == 1)
            let head = try #require(stats.lastRequestHead)
            #expect(head.method == "GET")
            #expect(head.uri == "/get?z=9")
            #expect(head.value("x-trace") == "abc")
            #expect(head.raw.hasPrefix("GET /get?z=9 HTTP/1.1\r\n"))
        }
    }

    @Test func oversizedDeclaredBodyIs413AndCloses() async throws {
        try await TestServerHarness.withServer { server async throws in
            let outcome = try await TestServerHarness.rawExchange(
                server, "POST /post HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\nabc")
            #expect(outcome.text.hasPrefix("HTTP/1.1 413 Payload Too Large\r\n"))
            #expect(outcome.text.contains("Connection: close\r\n"))
        }
    }

    @Test func keepAliveAndPipelinedRequestsAnswerInOrder() async throws {
        try await TestServerHarness.withServer { server async throws in
            let request =
                "GET /get?n=1 HTTP/1.1\r\nHost: a\r\n\r\n"
                + "POST /post?n=2 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
                + "GET /bytes/3?seed=1 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
            let outcome = try await TestServerHarness.rawExchange(server, request)
            let text = outcome.text
            #expect(text.components(separatedBy: "HTTP/1.1 200 OK\r\n").count == 4)
            let first = try #require(text.range(of: "\"n\": \"1\""))
            let second = try #require(text.range(of: "\"data\": \"hello\""))
            #expect(first.lowerBound < second.lowerBound)
            #expect(outcome.bytes.suffix(3) == TestServer.expectedBytes(count: 3, seed: 1)[...])
            #expect(server.stats.connectionsAccepted == 1)
            #expect(server.stats.requestsServed == 3)
        }
    }

    @Test func ipv6LoopbackServes() async throws {
        // A machine without IPv6 loopback cannot run this check.
        guard let server = try? await TestServer.start(host: "::1") else { return }
        #expect(server.baseURL.absoluteString == "http://[::1]:\(server.port)")
        let json = try await TestServerHarness.fetch(server, "/get").json()
        #expect(json["origin"] == "::1")
        try await server.shutdown()
    }
}

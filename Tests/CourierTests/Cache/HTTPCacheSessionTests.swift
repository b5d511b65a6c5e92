import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import CourierCore

/// The cache in a session against the test server's `/cache/resource` (answered in process by the
/// scripted test server; across managers, by the loopback one), whose counters say whether a
/// request reached the server.
@Suite("HTTP cache: end to end against the test server", .timeLimit(.minutes(3)))
struct HTTPCacheSessionTests {
    /// A server and a manager with `cache`; each test names its own resource.
    func withCache<R>(
        _ cache: HTTPCache = HTTPCache(), _ body: (ScriptedTestServer, SessionManager, HTTPCache) async throws -> R
    ) async throws -> R {
        try await withScriptedSession(configure: { $0.cache = cache }) { server, manager, _ in
            try await body(server, manager, cache)
        }
    }

    func resource(_ server: ScriptedTestServer, _ id: String, _ query: String) -> URL {
        server.url("/cache/resource?id=\(id)&\(query)")
    }

    func resource(_ server: TestServer, _ id: String, _ query: String) -> URL {
        server.url("/cache/resource?id=\(id)&\(query)")
    }

    func get(
        _ manager: SessionManager, _ url: URL, headers: HTTPFields = [:], policy: CachePolicy = .automatic
    ) async throws -> SessionResponse {
        var request = Request(url: url, headerFields: headers)
        request.cachePolicy = policy
        return try await manager.data(for: request)
    }

    @Test("a fresh response (max-age) answers the second GET without the server, with an Age field")
    func freshHit() async throws {
        try await withCache { server, manager, _ in
            let id = UUID().uuidString
            let url = resource(server, id, "cc=max-age=60")
            let first = try await get(manager, url)
            let second = try await get(manager, url)
            #expect(server.cacheStats(id: id).served == 1)
            #expect(second.response.statusCode == 200)
            #expect(second.data == first.data)
            #expect(second.response.value(forHTTPHeaderField: "Age") != nil)
            #expect(first.response.value(forHTTPHeaderField: "Age") == nil)
        }
    }

    @Test("no-cache with an ETag: revalidated; the 304's fields reach the caller with the stored body and 200")
    func revalidation() async throws {
        try await withCache { server, manager, _ in
            let id = UUID().uuidString
            let url = resource(server, id, "cc=no-cache&etag=1")
            let first = try await get(manager, url)
            let second = try await get(manager, url)
            let third = try await get(manager, url)
            let stats = server.cacheStats(id: id)
            #expect(stats.served == 1 && stats.notModified == 2)
            #expect(second.response.statusCode == 200 && third.response.statusCode == 200)
            #expect(second.data == first.data && third.data == first.data)
            #expect(first.response.value(forHTTPHeaderField: "X-Revalidated") == nil)
            #expect(second.response.value(forHTTPHeaderField: "X-Revalidated") == "1")
            #expect(third.response.value(forHTTPHeaderField: "X-Revalidated") == "2")
            #expect(third.response.value(forHTTPHeaderField: "ETag") == "\"v1\"")
        }
    }

    @Test("Last-Modified alone: a stale entry revalidates with If-Modified-Since")
    func revalidationByDate() async throws {
        try await withCache { server, manager, _ in
            let id = UUID().uuidString
            let url = resource(server, id, "cc=max-age=0&last_modified=3600")
            let first = try await get(manager, url)
            let second = try await get(manager, url)
            #expect(server.cacheStats(id: id).served == 1 && server.cacheStats(id: id).notModified == 1)
            #expect(second.data == first.data && second.response.statusCode == 200)
        }
    }

    @Test("heuristic freshness from Last-Modified for a 200 without explicit freshness")
    func heuristic() async throws {
        try await withCache { server, manager, _ in
            let id = UUID().uuidString
            let url = resource(server, id, "last_modified=100000")
            _ = try await get(manager, url)
            _ = try await get(manager, url)
            #expect(server.cacheStats(id: id).served == 1)
        }
    }

    @Test("Expires in the future is fresh; an invalid Expires is stale")
    func expires() async throws {
        try await withCache { server, manager, _ in
            let fresh = UUID().uuidString
            _ = try await get(manager, resource(server, fresh, "expires=120"))
            _ = try await get(manager, resource(server, fresh, "expires=120"))
            #expect(server.cacheStats(id: fresh).served == 1)
            let invalid = UUID().uuidString
            _ = try await get(manager, resource(server, invalid, "expires=bad"))
            _ = try await get(manager, resource(server, invalid, "expires=bad"))
            #expect(server.cacheStats(id: invalid).served == 2)
        }
    }

    @Test("no-store, s-maxage alone (a private cache) and a 500 without explicit freshness are not reused")
    func notStored() async throws {
        try await withCache { server, manager, _ in
            // A 500 with only Last-Modified: no explicit freshness, a status without a heuristic.
            for query in ["cc=no-store,max-age=60", "cc=s-maxage=60", "status=500&last_modified=3600"] {
                let id = UUID().uuidString
                _ = try await get(manager, resource(server, id, query))
                _ = try await get(manager, resource(server, id, query))
                #expect(server.cacheStats(id: id).served == 2, "\(query)")
            }
        }
    }

    @Test("a request's no-store, no-cache and policies bypass, reload and onlyIfCached")
    func requestDirectivesAndPolicies() async throws {
        try await withCache { server, manager, _ in
            let id = UUID().uuidString
            let url = resource(server, id, "cc=max-age=60")
            await expectCode(.cacheMiss) { try await get(manager, url, policy: .onlyIfCached) }
            #expect(server.cacheStats(id: id).served == 0)
            let only = try await get(manager, url, headers: [.cacheControl: "only-if-cached"])
            #expect(only.response.statusCode == 504)
            _ = try await get(manager, url)
            _ = try await get(manager, url, policy: .onlyIfCached)
            #expect(server.cacheStats(id: id).served == 1)
            _ = try await get(manager, url, headers: [.cacheControl: "no-cache"])
            #expect(server.cacheStats(id: id).served == 2)
            _ = try await get(manager, url, policy: .bypass)
            #expect(server.cacheStats(id: id).served == 3)
            let reloaded = try await get(manager, url, policy: .reloadIgnoringCache)
            #expect(server.cacheStats(id: id).served == 4)
            let cached = try await get(manager, url)
            #expect(server.cacheStats(id: id).served == 4)
            #expect(cached.data == reloaded.data)
        }
    }

    @Test("Vary: a stored response answers only requests with the same value of the named field")
    func vary() async throws {
        try await withCache { server, manager, _ in
            let id = UUID().uuidString
            let url = resource(server, id, "cc=max-age=60&vary=Accept")
            let json = try await get(manager, url, headers: [.accept: "application/json"])
            _ = try await get(manager, url, headers: [.accept: "application/json"])
            #expect(server.cacheStats(id: id).served == 1)
            let text = try await get(manager, url, headers: [.accept: "text/plain"])
            #expect(server.cacheStats(id: id).served == 2)
            let jsonAgain = try await get(manager, url, headers: [.accept: "application/json"])
            let textAgain = try await get(manager, url, headers: [.accept: "text/plain"])
            #expect(server.cacheStats(id: id).served == 2)
            #expect(jsonAgain.data == json.data && textAgain.data == text.data)
            #expect(try jsonObject(textAgain.data)["accept"] as? String == "text/plain")
            _ = try await get(manager, url)
            #expect(server.cacheStats(id: id).served == 3)
        }
    }

    @Test("Authorization: stored only when the response says public (§3.5)")
    func authorization() async throws {
        try await withCache { server, manager, _ in
            let authorized: HTTPFields = [.authorization: "Bearer secret"]
            let plain = UUID().uuidString
            _ = try await get(manager, resource(server, plain, "cc=max-age=60"), headers: authorized)
            _ = try await get(manager, resource(server, plain, "cc=max-age=60"), headers: authorized)
            #expect(server.cacheStats(id: plain).served == 2)
            let shared = UUID().uuidString
            _ = try await get(manager, resource(server, shared, "cc=public,max-age=60"), headers: authorized)
            _ = try await get(manager, resource(server, shared, "cc=public,max-age=60"), headers: authorized)
            #expect(server.cacheStats(id: shared).served == 1)
        }
    }

    @Test("POST, PUT and DELETE invalidate the URL, and a same-origin Content-Location (§4.4)")
    func unsafeMethodsInvalidate() async throws {
        try await withCache { server, manager, _ in
            let id = UUID().uuidString
            let url = resource(server, id, "cc=max-age=60")
            for (round, method) in [HTTPMethod.post, .put, .delete].enumerated() {
                let before = try await get(manager, url)
                _ = try await get(manager, url)
                #expect(server.cacheStats(id: id).served == round + 1)
                _ = try await manager.data(for: Request(method: method, url: url))
                let after = try await get(manager, url)
                #expect(server.cacheStats(id: id).served == round + 2)
                #expect(after.data != before.data)
                _ = try await get(manager, url)
                #expect(server.cacheStats(id: id).served == round + 2)
            }
            // A POST elsewhere whose Content-Location names the cached URL.
            let other = UUID().uuidString
            let target = resource(server, other, "cc=max-age=60")
            _ = try await get(manager, target)
            let location = target.absoluteString.replacingOccurrences(of: "&", with: "%26")
            let post = server.url("/cache/resource?id=poster&content_location=\(location)")
            _ = try await manager.data(for: Request(method: .post, url: post))
            _ = try await get(manager, target)
            #expect(server.cacheStats(id: other).served == 2)
        }
    }

    @Test("a body cut short is not stored")
    func truncatedBodyNotStored() async throws {
        try await withCache { server, manager, _ in
            let id = UUID().uuidString
            let url = resource(server, id, "cc=max-age=60&truncate=1")
            for _ in 0..<2 {
                do {
                    _ = try await get(manager, url)
                    Issue.record("a truncated body was delivered")
                } catch {}
            }
            #expect(server.cacheStats(id: id).served == 2)
        }
    }

    @Test("cached responses go through validation, serializers and cookies as network ones")
    func cachedResponsesThroughTheSession() async throws {
        try await withCache { server, manager, _ in
            let id = UUID().uuidString
            let missing = resource(server, id, "cc=max-age=60&status=404")
            for _ in 0..<2 {
                let response = try await get(manager, missing)
                #expect(response.response.statusCode == 404)
            }
            #expect(server.cacheStats(id: id).served == 1)
            let cookieID = UUID().uuidString
            let url = resource(server, cookieID, "cc=max-age=60&set_cookie=1")
            _ = try await get(manager, url)
            (manager.configuration.cookieStorage as? CookieJar)?.removeAll()
            #expect(manager.configuration.cookieStorage?.cookieHeaderValue(for: url) == nil)
            let decoded = try await manager.data(for: Request(url: url), serializer: JSONResponseSerializer())
            #expect(server.cacheStats(id: cookieID).served == 1)
            #expect(decoded.response.statusCode == 200)
            #expect(manager.configuration.cookieStorage?.cookieHeaderValue(for: url) == "cached=1")
        }
    }

    @Test("downloads and streams bypass the cache unless their request asks for it")
    func downloadsBypass() async throws {
        try await withCache { server, manager, _ in
            let id = UUID().uuidString
            let url = resource(server, id, "cc=max-age=60")
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cache-dl-\(id)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            for index in 0..<2 {
                _ = try await manager.download(Request(url: url)) { _, _ in
                    directory.appendingPathComponent("plain-\(index)")
                }
            }
            #expect(server.cacheStats(id: id).served == 2)
            var asked = Request(url: url)
            asked.cachePolicy = .useCache
            for index in 0..<2 {
                let response = try await manager.download(asked) { _, _ in
                    directory.appendingPathComponent("asked-\(index)")
                }
                let fileURL = try #require(response.fileURL)
                #expect(try jsonObject(Data(contentsOf: fileURL))["id"] as? String == id)
            }
            #expect(server.cacheStats(id: id).served == 3)

            let streamed = UUID().uuidString
            let streamURL = resource(server, streamed, "cc=max-age=60")
            var streamRequest = Request(url: streamURL)
            for round in 0..<4 {
                if round == 2 { streamRequest.cachePolicy = .useCache }
                let response = try await manager.stream(streamRequest)
                var bytes = 0
                for try await chunk in response.body { bytes += chunk.readableBytes }
                #expect(bytes > 0)
            }
            // Two plain streams reach the server; of the two that ask, the first stores, the second reuses.
            #expect(server.cacheStats(id: streamed).served == 3)
        }
    }

    @Test("a disk cache survives a new manager and cache; a truncated file is a miss, then replaced")
    func diskCache() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let id = UUID().uuidString
        let server = try await TestServer.start()
        do {
            let target = resource(server, id, "cc=max-age=600")
            let first = SessionManager(configuration: Self.configuration(try HTTPCache(directory: directory)))
            let original = try await get(first, target)
            try await first.shutdown()
            #expect(server.cacheStats(id: id).served == 1)

            let second = SessionManager(configuration: Self.configuration(try HTTPCache(directory: directory)))
            let reused = try await get(second, target)
            try await second.shutdown()
            #expect(server.cacheStats(id: id).served == 1)
            #expect(reused.data == original.data)

            // Cut the file short: the next cache treats it as a miss, asks the server, and stores anew.
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
                $0.hasSuffix(".cache")
            }
            #expect(files.count == 1)
            for name in files {
                let path = directory.appendingPathComponent(name)
                let data = try Data(contentsOf: path)
                try data.prefix(data.count - 9).write(to: path)
            }
            let third = SessionManager(configuration: Self.configuration(try HTTPCache(directory: directory)))
            _ = try await get(third, target)
            _ = try await get(third, target)
            try await third.shutdown()
            #expect(server.cacheStats(id: id).served == 2)
            let fourth = SessionManager(configuration: Self.configuration(try HTTPCache(directory: directory)))
            _ = try await get(fourth, target)
            try await fourth.shutdown()
            #expect(server.cacheStats(id: id).served == 2)
            try await server.shutdown()
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    @Test("a directory that cannot be made is a typed error")
    func unusableDirectory() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-file-\(UUID())")
        try Data("x".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        expectCode(.cacheDirectoryUnusable) { try HTTPCache(directory: file.appendingPathComponent("sub")) }
    }

    static func configuration(_ cache: HTTPCache) -> SessionManager.Configuration {
        var configuration = SessionManager.Configuration()
        configuration.cache = cache
        return configuration
    }
}

/// The exchange with a scripted network and a fixed clock: exact ages through a revalidation.
@Suite("HTTP cache: exchange with a scripted network")
struct HTTPCacheExchangeTests {
    final class Clock: Sendable {
        let now = NIOLockedValueBoxForTests(CacheFreshnessTests.t0)
        func advance(_ seconds: Double) { now.set(now.get().addingTimeInterval(seconds)) }
    }

    @Test("fresh for max-age seconds, then a conditional request whose 304 restarts the age")
    func scripted() async throws {
        let clock = Clock()
        let cache = HTTPCache(clock: { clock.now.get() })
        let url = URL(string: "http://127.0.0.1/thing")!
        let sent = NIOLockedValueBoxForTests<[Request]>([])
        let send: (Request) async throws -> TransportResponse = { request in
            sent.set(sent.get() + [request])
            if request.headerFields[.ifNoneMatch] == "\"a\"" {
                return TransportResponse(
                    head: ResponseHead(
                        status: .notModified,
                        headerFields: [
                            .cacheControl: "max-age=100", .eTag: "\"a\"", .date: "Sun, 06 Nov 1994 08:51:17 GMT",
                        ],
                        url: url),
                    body: HTTPCache.chunks(ByteBuffer()))
            }
            return TransportResponse(
                head: ResponseHead(
                    status: .ok,
                    headerFields: [
                        .cacheControl: "max-age=60", .eTag: "\"a\"", .date: "Sun, 06 Nov 1994 08:49:37 GMT",
                        .contentLength: "5",
                    ], url: url),
                body: HTTPCache.chunks(ByteBuffer(string: "hello")))
        }
        func fetch() async throws -> (ResponseHead, String) {
            let response = try await cache.exchange(Request(url: url), participation: .use, send: send)
            var body = ""
            for try await chunk in response.body { body += String(buffer: chunk) }
            return (response.head, body)
        }
        let (_, firstBody) = try await fetch()
        #expect(firstBody == "hello" && sent.get().count == 1)
        clock.advance(59)
        let (hit, hitBody) = try await fetch()
        #expect(hit.headerFields[.age] == "59" && hitBody == "hello" && sent.get().count == 1)
        clock.advance(1)
        // Age 60 = max-age: stale. The 304 (Date 100 s after the first) restarts the age at 0.
        clock.advance(40)
        let (revalidated, revalidatedBody) = try await fetch()
        #expect(sent.get().count == 2)
        #expect(sent.get().last?.headerFields[.ifNoneMatch] == "\"a\"")
        #expect(revalidated.status == .ok && revalidatedBody == "hello")
        #expect(revalidated.headerFields[.cacheControl] == "max-age=100")
        #expect(revalidated.headerFields[.age] == "0")
        clock.advance(99)
        let (again, _) = try await fetch()
        #expect(again.headerFields[.age] == "99" && sent.get().count == 2)
    }
}

/// A tiny lock box for test closures.
final class NIOLockedValueBoxForTests<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
}

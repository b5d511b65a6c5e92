import Courier
import Foundation
import Testing

@testable import CourierCore

/// The core scenarios against real httpbin (PyPI `httpbin` under gunicorn on loopback).
///
/// Reads `COURIER_HTTPBIN_URL` (such as `http://127.0.0.1:8000`); without it the suite is
/// skipped, except when `CI=true`, where a missing URL is a failure.
@Suite("Interop with real httpbin", .timeLimit(.minutes(3)))
struct HttpbinInteropTests {
    static let baseURL: URL? = ProcessInfo.processInfo.environment["COURIER_HTTPBIN_URL"].flatMap(URL.init(string:))
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"

    func withHttpbin(_ body: (HTTPSessionManager) async throws -> Void) async throws {
        guard let base = Self.baseURL else {
            if Self.isCI { Issue.record("CI=true but COURIER_HTTPBIN_URL is not set") }
            return
        }
        let host = base.host ?? ""
        try #require(host == "127.0.0.1" || host == "::1" || host == "localhost", "httpbin must be on loopback")
        let manager = HTTPSessionManager(baseURL: base)
        do {
            try await body(manager)
        } catch {
            Issue.record(error)
        }
        try await manager.shutdown()
    }

    @Test func getPostAndHeaders() async throws {
        try await withHttpbin { manager in
            let get = try await manager.get("get", parameters: ["q": "swift"], headers: ["X-Courier": "1"])
            let getValue = try #require(get.value as? JSONValue)
            #expect(getValue["args"]?["q"] == .string("swift"))
            #expect(getValue["headers"]?["X-Courier"] == .string("1"))
            let post = try await manager.post("post", parameters: ["a": "b"])
            #expect((post.value as? JSONValue)?["form"]?["a"] == .string("b"))
        }
    }

    /// Digest authentication (RFC 7616) against httpbin's `/digest-auth`, MD5 and SHA-256, with
    /// and without `qop`: the 401's challenge is answered once, and later requests answer it at
    /// once; wrong credentials end in the 401.
    @Test(arguments: ["auth/user/passwd/MD5", "auth/user/passwd/SHA-256", "auth/user/passwd/MD5-sess"])
    func digestAuthentication(_ path: String) async throws {
        guard let base = Self.baseURL else {
            if Self.isCI { Issue.record("CI=true but COURIER_HTTPBIN_URL is not set") }
            return
        }
        let manager = SessionManager(interceptor: DigestAuthenticator(user: "user", password: "passwd"))
        let url = base.appendingPathComponent("digest-auth").appending(path: path)
        do {
            for _ in 0..<2 {
                let response = try await manager.data(for: Request(url: url))
                #expect(response.response.statusCode == 200, "\(String(decoding: response.data, as: UTF8.self))")
                #expect(try jsonObject(response.data)["authenticated"] as? Bool == true)
            }
            let wrong = SessionManager(interceptor: DigestAuthenticator(user: "user", password: "wrong"))
            let refused = try await wrong.data(for: Request(url: url))
            #expect(refused.response.statusCode == 401)
            try await wrong.shutdown()
        } catch {
            Issue.record(error)
        }
        try await manager.shutdown()
    }

    @Test(arguments: [307, 308])
    func redirectResendsTheBody(status: Int) async throws {
        try await withHttpbin { manager in
            let payload = patternData(count: 100_000)
            var request = try manager.request(.post, "redirect-to")
            request.url = try manager.url(for: "redirect-to?url=/post&status_code=\(status)")
            request.body = .data(Data(payload.base64EncodedString().utf8))
            try request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
            let response = try await manager.session.data(for: request)
            let echo = try jsonObject(response.data)
            #expect(echo["data"] as? String == payload.base64EncodedString())
        }
    }

    @Test func multipartAndDownload() async throws {
        try await withHttpbin { manager in
            let response = try await manager.post(
                "post",
                .multipart(parameters: ["field": "value"]) { form in
                    form.append(Data("hello".utf8), name: "file", fileName: "a.txt", mimeType: "text/plain")
                })
            let value = try #require(response.value as? JSONValue)
            #expect(value["form"]?["field"] == .string("value"))
            #expect(value["files"]?["file"] == .string("hello"))
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "courier-httpbin-\(UUID().uuidString)")
            let file = directory.appendingPathComponent("bytes.bin")
            let download = try await manager.download(
                "bytes/20000", to: file, options: [.createIntermediateDirectories])
            #expect(try Data(contentsOf: try #require(download.fileURL)).count == 20_000)
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test func redirectChainAndStatus() async throws {
        try await withHttpbin { manager in
            let chain = try await manager.session.data(for: Request(url: try manager.url(for: "redirect/3")))
            #expect(chain.response.statusCode == 200)
            await expectCode(.unacceptableStatusCode) { try await manager.get("status/503") }
        }
    }

    @Test func cookiesSetOnARedirectAreSentBackAndDeleted() async throws {
        try await withHttpbin { manager in
            let set = try await manager.get("cookies/set", parameters: ["flavour": "oat", "size": "2"])
            #expect((set.value as? JSONValue)?["cookies"] == ["flavour": "oat", "size": "2"])
            let jar = try #require(manager.session.configuration.cookieStorage as? CookieJar)
            #expect(jar.allCookies.map(\.name) == ["flavour", "size"])
            let deleted = try await manager.get("cookies/delete", parameters: ["flavour": ""])
            #expect((deleted.value as? JSONValue)?["cookies"] == ["size": "2"])
            #expect(jar.allCookies.map(\.name) == ["size"])
        }
    }
}

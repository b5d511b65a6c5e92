import Courier
import CourierTesting
import Foundation
import Testing

@testable import CourierCore

/// The verb core over a scripted transport: every verb's `timeout:`, every kind of
/// `RequestContent`, credentials in the URL, and a verb for any method.
@Suite("HTTPSessionManager verbs: timeout, content, credentials", .timeLimit(.minutes(2)))
struct VerbContentAndTimeoutTests {
    struct Echo: Decodable, Sendable { var ok: Bool }

    /// Answers `/slow` after 30 s (so only a deadline ends it) and anything else at once with `{"ok":true}`.
    static func transport() -> ScriptedTransport {
        ScriptedTransport { sent in
            sent.request.url.path == "/slow"
                ? .json(#"{"ok":true}"#).delayed(by: .seconds(30)) : .json(#"{"ok":true}"#)
        }
    }

    @Test func everyKindOfVerbTakesATimeoutThatEndsTheRequest() async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: "http://api.test/"), transport: Self.transport())
        let timeout = Duration.milliseconds(50)
        #expect(try manager.request(.get, "slow", timeout: .seconds(2)).timeoutInterval == 2)

        await expectCode(.timedOut) { try await manager.get("slow", timeout: timeout) }
        await expectCode(.timedOut) { try await manager.post("slow", .json(["a": 1]), as: Echo.self, timeout: timeout) }
        await expectCode(.timedOut) {
            try await manager.put("slow", parameters: ["a": "b"], as: Echo.self, timeout: timeout)
        }
        await expectCode(.timedOut) { try await manager.patch("slow", .data(Data("x".utf8)), timeout: timeout) }
        await expectCode(.timedOut) { try await manager.get.stream("slow", timeout: timeout) }
        await expectCode(.timedOut) {
            let directory = FileManager.default.temporaryDirectory
            _ = try await manager.download(
                "slow", timeout: timeout, to: directory.appendingPathComponent(UUID().uuidString))
        }
        let result = await withCheckedContinuation { continuation in
            manager.delete("slow", timeout: timeout, completion: { continuation.resume(returning: $0) })
        }
        #expect(throws: CourierError.self) { try result.get() }
        #expect(try await manager.get("fast", as: Echo.self, timeout: .seconds(10)).value.ok)
    }

    @Test func eachContentSetsTheBodyAndItsTypeUnlessTheCallNamesOne() async throws {
        let transport = Self.transport()
        let manager = HTTPSessionManager(baseURL: URL(string: "http://api.test/"), transport: transport)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("verb-\(UUID().uuidString).txt")
        try Data("from a file".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        _ = try await manager.put("bytes", .data(Data("raw".utf8), contentType: "text/plain"), as: Echo.self)
        _ = try await manager.put("file", .file(file), headers: ["Content-Type": "text/markdown"])
        let chunks = RequestBody.stream(length: 6) {
            AsyncStream {
                $0.yield(.init(string: "stream")); $0.finish()
            }
        }
        _ = try await manager.post("stream", .body(chunks, contentType: "application/octet-stream"))
        _ = try await manager.post("form", .form(["b": "2", "a": "1"]), headers: ["content-type": "text/x-form"])

        let sent = transport.sent
        #expect(sent.map { String(decoding: $0.body, as: UTF8.self) } == ["raw", "from a file", "stream", "a=1&b=2"])
        #expect(
            sent.map { $0.request.value(forHTTPHeaderField: "Content-Type") } == [
                "text/plain", "text/markdown", "application/octet-stream", "text/x-form",
            ])
        #expect(sent.map(\.request.method) == [.put, .put, .post, .post])
    }

    @Test func credentialsInTheBaseURLBecomeBasicAuthorizationAndLeaveTheURL() async throws {
        let transport = Self.transport()
        let manager = HTTPSessionManager(baseURL: URL(string: "http://ann:pw@api.test/v1/"), transport: transport)
        let request = try manager.request(.get, "me")
        #expect(request.url.absoluteString == "http://api.test/v1/me")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Basic YW5uOnB3")
        _ = try await manager.get("me", as: Echo.self, headers: ["Authorization": "Bearer t"])
        #expect(transport.sent.last?.request.value(forHTTPHeaderField: "Authorization") == "Bearer t")
    }

    @Test func aVerbForAnyMethodSendsItAsTheOthersDo() async throws {
        let transport = Self.transport()
        let manager = HTTPSessionManager(baseURL: URL(string: "http://api.test/"), transport: transport)
        let propfind = HTTPSessionManager.Verb(manager: manager, method: try HTTPMethod(validating: "PROPFIND"))
        let response = try await propfind("dav", .data(Data("<propfind/>".utf8), contentType: "application/xml"))
        #expect(response.request.method.rawValue == "PROPFIND")
        #expect(transport.sent.last?.request.value(forHTTPHeaderField: "Content-Type") == "application/xml")
    }
}

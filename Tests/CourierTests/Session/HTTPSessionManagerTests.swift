import Courier
import CourierTestServer
import Foundation
import Testing

@testable import CourierCore

@Suite("HTTPSessionManager: base URL rules, verbs, multipart, download", .timeLimit(.minutes(3)))
struct HTTPSessionManagerTests {
    @Test func baseURLGetsATrailingSlashAndResolvesByRFC3986() throws {
        let manager = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:8080/v1"), transport: NoTransport())
        #expect(manager.baseURL?.absoluteString == "http://127.0.0.1:8080/v1/")
        #expect(try manager.url(for: "get").absoluteString == "http://127.0.0.1:8080/v1/get")
        #expect(try manager.url(for: "get?x=1").absoluteString == "http://127.0.0.1:8080/v1/get?x=1")
        #expect(try manager.url(for: "/get").absoluteString == "http://127.0.0.1:8080/get")
        #expect(try manager.url(for: "../up").absoluteString == "http://127.0.0.1:8080/up")
        #expect(try manager.url(for: "//[::1]:9/x").absoluteString == "http://[::1]:9/x")
        #expect(try manager.url(for: "http://localhost/abs").absoluteString == "http://localhost/abs")
        let root = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:8080"), transport: NoTransport())
        #expect(root.baseURL?.absoluteString == "http://127.0.0.1:8080")
        #expect(try root.url(for: "get").absoluteString == "http://127.0.0.1:8080/get")
        let none = HTTPSessionManager(transport: NoTransport())
        expectCode(.invalidURL) { try none.url(for: "relative/path") }
    }

    @Test func perCallHeadersWinOverTheSerializers() throws {
        let manager = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1/"), transport: NoTransport())
        var serializer = HTTPRequestSerializer()
        serializer.setValue("default", forHTTPHeaderField: "X-Key")
        serializer.setValue("kept", forHTTPHeaderField: "X-Other")
        manager.requestSerializer = serializer
        let request = try manager.request(.get, "get", .parameters(["q": "swift"]), headers: ["x-key": "call"])
        #expect(request.value(forHTTPHeaderField: "X-Key") == "call")
        #expect(request.value(forHTTPHeaderField: "X-Other") == "kept")
        #expect(request.url.absoluteString == "http://127.0.0.1/get?q=swift")
        expectCode(.invalidHeader) { try manager.request(.get, "get", headers: ["X-Bad": "a\r\nb"]) }
    }

    func withManager(_ body: (ScriptedTestServer, HTTPSessionManager, URL) async throws -> Void) async throws {
        let server = ScriptedTestServer()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-http-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let manager = HTTPSessionManager(baseURL: server.baseURL, transport: server.transport)
        do {
            try await body(server, manager, directory)
        } catch {
            Issue.record(error)
        }
        try await manager.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    func object(_ response: DataResponse<any Sendable>) throws -> [String: JSONValue] {
        guard let value = response.value as? JSONValue, case .object(let members) = value else {
            Issue.record("not an object: \(response.value)")
            return [:]
        }
        return members
    }

    @Test func verbsSendParametersAndDecodeJSON() async throws {
        try await withManager { _, manager, _ in
            let get = try object(try await manager.get("get", parameters: ["q": "swift", "n": 1]))
            #expect(get["args"] == .object(["q": .string("swift"), "n": .string("1")]))
            let post = try object(try await manager.post("post", parameters: ["a": "b"]))
            #expect(post["form"] == .object(["a": .string("b")]))
            for (verb, call) in [
                ("PUT", { try await manager.put("put", parameters: ["a": "b"]) }),
                ("PATCH", { try await manager.patch("patch", parameters: ["a": "b"]) }),
                ("DELETE", { try await manager.delete("delete", parameters: ["a": "b"]) }),
            ] as [(String, () async throws -> DataResponse<any Sendable>)] {
                let response = try await call()
                #expect(response.response.statusCode == 200, "\(verb)")
                #expect(response.request.method.rawValue == verb)
            }
            let head = try await manager.head("get")
            #expect(head.response.statusCode == 200)
            #expect(head.data.isEmpty)
            await expectCode(.unacceptableStatusCode) { try await manager.get("status/404") }
        }
    }

    @Test func completionHandlerFormsDeliverOnce() async throws {
        try await withManager { _, manager, _ in
            let result = await withCheckedContinuation { continuation in
                manager.get("get", parameters: ["x": "1"], completion: { continuation.resume(returning: $0) })
            }
            let response = try result.get()
            #expect(response.response.statusCode == 200)
            let failed = await withCheckedContinuation { continuation in
                _ = manager.get("get", headers: ["X-Bad": "\n"], completion: { continuation.resume(returning: $0) })
            }
            #expect((try? failed.get()) == nil)
        }
    }

    @Test func multipartPostStreamsTheFormWithProgress() async throws {
        try await withManager { _, manager, directory in
            let payload = patternData(count: 1_200_000, seed: 4)
            let file = try temporaryFile(payload, in: directory, name: "photo.jpg")
            let progress = Recorder<TransferProgress>()
            let response = try await manager.post(
                "upload",
                .multipart(parameters: ["greeting": "hello"]) { form in try form.append(fileURL: file, name: "photo") },
                uploadProgress: { progress.append($0) })
            let sink = try object(response)
            #expect(sink["part_count"] == .int(2))
            guard case .array(let parts)? = sink["parts"], parts.count == 2, case .object(let photo) = parts[1] else {
                Issue.record("unexpected parts: \(String(describing: sink["parts"]))")
                return
            }
            #expect(photo["sha256"] == .string(sha256Hex(payload)))
            #expect(photo["filename"] == .string("photo.jpg"))
            #expect(photo["content_type"] == .string("image/jpeg"))
            let total = try #require(progress.values.last?.totalUnitCount)
            expectWellFormedProgress(progress.values, total: total)
            #expect(sink["content_length"] == .string("\(total)"))
        }
    }

    @Test func downloadToAURL() async throws {
        try await withManager { _, manager, directory in
            let destination = directory.appendingPathComponent("bytes.bin")
            let response = try await manager.download("bytes/100000?seed=8", to: destination)
            #expect(response.fileURL == destination)
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedBytes(count: 100_000, seed: 8))
        }
    }
}

/// A transport for tests that never send.
struct NoTransport: Transport {
    func send(_ request: Request, context: ExchangeContext) async throws -> TransportResponse {
        throw CourierError(.transportFailed, "NoTransport sends nothing")
    }
    func shutdown() async throws {}
}

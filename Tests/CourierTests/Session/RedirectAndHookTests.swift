import Courier
import CourierTestServer
import Foundation
import NIOCore
import Testing

@testable import CourierCore

enum BodyKind: String, CaseIterable, Sendable {
    case bytes, file, multipart
}

@Suite("Redirects, hooks and retry over the scripted test server", .timeLimit(.minutes(3)))
struct RedirectAndHookTests {
    func redirectURL(_ server: ScriptedTestServer, to target: String, status: Int) -> URL {
        server.url("/redirect-to?url=\(target)&status_code=\(status)")
    }

    /// A POST of `kind` to `url`, and the exact bytes its body has.
    func post(_ kind: BodyKind, to url: URL, directory: URL) throws -> (Request, Data) {
        let payload = patternData(count: 700_000, seed: 3)
        var request = Request(method: .post, url: url)
        switch kind {
        case .bytes:
            request.body = .data(payload)
            return (request, payload)
        case .file:
            request.body = try .file(try temporaryFile(payload, in: directory))
            return (request, payload)
        case .multipart:
            var form = try MultipartFormData(boundary: "courier-test-boundary")
            form.append("value", name: "field")
            try form.append(fileURL: try temporaryFile(payload, in: directory, name: "photo.bin"), name: "photo")
            request.body = .source(form)
            try request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
            return (request, try form.encode())
        }
    }

    @Test(arguments: [307, 308], BodyKind.allCases)
    func bodyIsResentIntact(status: Int, kind: BodyKind) async throws {
        try await withScriptedSession { server, manager, directory in
            let (request, expected) = try post(
                kind, to: redirectURL(server, to: "/upload", status: status), directory: directory)
            let progress = Recorder<TransferProgress>()
            let response = try await manager.data(for: request, uploadProgress: { progress.append($0) })
            let sink = try jsonObject(response.data)
            #expect(sink["method"] as? String == "POST")
            #expect(sink["sha256"] as? String == sha256Hex(expected))
            #expect(sink["bytes"] as? Int == expected.count)
            #expect(sink["content_length"] as? String == "\(expected.count)")
            #expect(response.request.url.path == "/upload")
            expectWellFormedProgress(progress.values, total: Int64(expected.count))
        }
    }

    @Test(arguments: [301, 302, 303], BodyKind.allCases)
    func postBecomesGetWithoutBody(status: Int, kind: BodyKind) async throws {
        try await withScriptedSession { server, manager, directory in
            let (request, _) = try post(
                kind, to: redirectURL(server, to: "/anything", status: status), directory: directory)
            let response = try await manager.data(for: request)
            let echo = try jsonObject(response.data)
            #expect(echo["method"] as? String == "GET")
            #expect(response.request.method == .get)
            #expect(response.request.body.isEmpty)
            let headers = try #require(echo["headers"] as? [String: Any])
            #expect(headers["Content-Type"] == nil)
        }
    }

    @Test func oneShotBodyOn307IsATypedError() async throws {
        try await withScriptedSession { server, manager, _ in
            let body = RequestBody.oneShotStream(length: 4, SingleChunk(buffer: ByteBuffer(string: "once")))
            let request = Request(method: .post, url: redirectURL(server, to: "/upload", status: 307), body: body)
            await expectCode(.bodyNotReplayable) { try await manager.data(for: request) }
        }
    }

    @Test func needNewBodyStreamSuppliesTheResentBody() async throws {
        try await withScriptedSession { server, manager, _ in
            let calls = Recorder<Int>()
            var hooks = SessionHooks()
            hooks.needNewBodyStream = { task, request in
                calls.append(task.identifier)
                return .oneShotStream(length: 4, SingleChunk(buffer: ByteBuffer(string: "anew")))
            }
            manager.hooks = hooks
            let body = RequestBody.oneShotStream(length: 4, SingleChunk(buffer: ByteBuffer(string: "once")))
            let request = Request(method: .post, url: redirectURL(server, to: "/upload", status: 307), body: body)
            let sink = try jsonObject(try await manager.data(for: request).data)
            #expect(sink["sha256"] as? String == sha256Hex(Data("anew".utf8)))
            #expect(calls.values.count == 1)
        }
    }

    @Test func redirectLimitAndChains() async throws {
        try await withScriptedSession(configure: { $0.redirectPolicy = RedirectPolicy(maximumRedirects: 3) }) {
            server, manager, _ in
            let ok = try await manager.data(for: Request(url: server.url("/redirect/3")))
            #expect(ok.response.statusCode == 200)
            await expectCode(.tooManyRedirects) { try await manager.data(for: Request(url: server.url("/redirect/4"))) }
            let relative = try await manager.data(for: Request(url: server.url("/relative-redirect/2")))
            #expect(relative.response.statusCode == 200)
        }
    }

    @Test func willPerformRedirectionCanChangeOrStop() async throws {
        try await withScriptedSession { server, manager, _ in
            var hooks = SessionHooks()
            hooks.willPerformRedirection = { _, response, request in
                if request.url.path == "/get" { return nil }
                var changed = request
                changed.headerFields[.init("X-Redirected")!] = "\(response.statusCode)"
                return changed
            }
            manager.hooks = hooks
            let stopped = try await manager.data(for: Request(url: redirectURL(server, to: "/get", status: 302)))
            #expect(stopped.response.statusCode == 302)
            let changed = try await manager.data(for: Request(url: redirectURL(server, to: "/headers", status: 302)))
            let headers = try #require(try jsonObject(changed.data)["headers"] as? [String: Any])
            #expect(headers["X-Redirected"] as? String == "302")
        }
    }

    @Test func didReceiveResponseCanCancelOrBecomeDownload() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("became.bin")
            var hooks = SessionHooks()
            hooks.didReceiveResponse = { task, response in
                if task.originalRequest.url.path == "/status/418" { return .cancel }
                return .becomeDownload(options: [], destination: { _, _ in destination })
            }
            let received = Recorder<Int>()
            hooks.didReceiveData = { _, chunk in received.append(chunk.readableBytes) }
            let completed = Recorder<Int>()
            hooks.didComplete = { task, _ in completed.append(task.identifier) }
            manager.hooks = hooks
            await expectCode(.cancelled) { try await manager.data(for: Request(url: server.url("/status/418"))) }
            let became = try await manager.data(for: Request(url: server.url("/bytes/50000?seed=2")))
            #expect(became.fileURL == destination)
            #expect(became.data.isEmpty)
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedBytes(count: 50_000, seed: 2))
            #expect(received.values.reduce(0, +) == 50_000)
            #expect(completed.values.count == 2)
        }
    }

    final class Monitor: EventMonitor {
        let events = Recorder<String>()
        func taskDidResume(_ task: SessionTask) { events.append("resume") }
        func taskDidSuspend(_ task: SessionTask) { events.append("suspend") }
        func task(_ task: SessionTask, willRedirectTo request: Request, response: ResponseHead) {
            events.append("redirect \(response.statusCode)")
        }
        func task(_ task: SessionTask, willRetry request: Request, after delay: Duration) { events.append("retry") }
        func task(_ task: SessionTask, didCompleteWith result: Result<SessionResponse, CourierError>) {
            events.append((try? result.get()).map { "complete \($0.response.statusCode)" } ?? "failed")
        }
    }

    @Test func eventMonitorSeesTheLifecycle() async throws {
        let monitor = Monitor()
        try await withScriptedSession(eventMonitors: [monitor]) { server, manager, _ in
            _ = try await manager.data(for: Request(url: redirectURL(server, to: "/get", status: 303)))
            #expect(monitor.events.values == ["resume", "redirect 303", "complete 200"])
        }
    }

    @Test func retryPolicyRetriesWithTheInjectedSleeper() async throws {
        let delays = Recorder<Duration>()
        let monitor = Monitor()
        try await withScriptedSession(
            configure: { $0.sleeper = { delays.append($0) } }, interceptor: RetryPolicy(), eventMonitors: [monitor]
        ) { server, manager, _ in
            let response = try await manager.data(
                for: Request(url: server.url("/fault/flaky?id=a&failures=2&status=503")))
            #expect(response.response.statusCode == 200)
            #expect(try jsonObject(response.data)["attempt"] as? Int == 3)
            #expect(delays.values == [.milliseconds(500), .seconds(1)])
            // Three failures exceed the two retries: the last 503 is delivered.
            let exhausted = try await manager.data(
                for: Request(url: server.url("/fault/flaky?id=b&failures=3&status=500")))
            #expect(exhausted.response.statusCode == 500)
            // Connection failures are retried too. (The session itself sends a GET once more
            // when its connection closes before any answer, so two closes reach the policy once.)
            let closed = try await manager.data(
                for: Request(url: server.url("/fault/flaky?id=c&failures=2&mode=close")))
            #expect(closed.response.statusCode == 200)
            // POST is not idempotent: no retry.
            let post = try await manager.data(
                for: Request(method: .post, url: server.url("/fault/flaky?id=d&failures=1&status=503")))
            #expect(post.response.statusCode == 503)
            #expect(monitor.events.values.filter { $0 == "retry" }.count == 5)
        }
    }

    struct TokenAdapter: RequestInterceptor {
        func adapt(_ request: Request) async throws -> Request {
            var request = request
            try request.setValue("Bearer token", forHTTPHeaderField: "Authorization")
            return request
        }
    }

    @Test func adapterChangesEveryAttempt() async throws {
        try await withScriptedSession(interceptor: TokenAdapter()) { server, manager, _ in
            let response = try await manager.data(for: Request(url: server.url("/headers")))
            let headers = try #require(try jsonObject(response.data)["headers"] as? [String: Any])
            #expect(headers["Authorization"] as? String == "Bearer token")
        }
    }
}

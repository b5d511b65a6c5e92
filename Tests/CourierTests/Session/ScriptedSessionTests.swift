import Courier
import CourierTesting
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import CourierCore

/// The session over a custom transport, with no network: the protocol is the whole boundary, so
/// a ScriptedTransport gets the deadline, cancellation, progress and errors the default one does.
@Suite("Session over a scripted transport: deadlines, cancels, redirects, retries, errors", .timeLimit(.minutes(3)))
struct ScriptedSessionTests {
    let base = URL(string: "http://api.test/start")!

    struct User: Decodable, Sendable { var name: String }

    /// README, "Testing without a network, and custom transports", as written there.
    @Test func theReadmeExample() async throws {
        let transport = ScriptedTransport { sent in
            switch sent.request.url.path {
            case "/v1/login": return .redirect(303, to: "/v1/me")
            case "/v1/me": return .json(#"{"name":"Ada"}"#)
            case "/v1/slow": return .text("late").delayed(by: .seconds(30))
            default: return .failure(.connectionFailed)
            }
        }
        let api = HTTPSessionManager(baseURL: URL(string: "http://api.test/v1/"), transport: transport)
        let me = try await api.get("login", as: User.self)
        #expect(me.value.name == "Ada")
        #expect(transport.sent.map(\.request.url.path) == ["/v1/login", "/v1/me"])

        var slow = Request(url: URL(string: "http://api.test/v1/slow")!)
        slow.timeoutInterval = 0.05
        await expectCode(.timedOut) { try await api.session.data(for: slow) }
        await expectCode(.connectionFailed) {
            try await api.session.data(for: Request(url: URL(string: "http://api.test/x")!))
        }
    }

    @Test func aCustomTransportGetsItsDefaultDeadline() async throws {
        // The deadline reaches the transport: a long one, so that a loaded machine cannot
        // pass it before the exchange is handed over (a 50 ms one once did, in a parallel run).
        let told = ScriptedTransport(
            capabilities: TransportCapabilities(defaultTimeout: .seconds(600)), replies: [.text("ok")])
        let before = NIODeadline.now()
        _ = try await SessionManager(transport: told).data(for: Request(url: base))
        let deadline = try #require(told.sent.first?.deadline, "the transport was told the deadline")
        #expect(deadline >= before + .seconds(600))
        // And it ends an exchange that outlasts it, whether or not it was handed over by then.
        let slow = ScriptedTransport(
            capabilities: TransportCapabilities(defaultTimeout: .milliseconds(50)),
            replies: [.status(200).delayed(by: .seconds(60))])
        await expectCode(.timedOut) { try await SessionManager(transport: slow).data(for: Request(url: base)) }
    }

    @Test func noDeadlineIsNilAllTheWayDown() async throws {
        let transport = ScriptedTransport(replies: [.text("ok")])
        let response = try await SessionManager(transport: transport).data(for: Request(url: base))
        #expect(String(decoding: response.data, as: UTF8.self) == "ok")
        #expect(transport.sent.count == 1)
        #expect(transport.sent[0].deadline == nil)
    }

    @Test func cancellingATaskStopsAScriptedExchange() async throws {
        let transport = ScriptedTransport(replies: [.status(200).delayed(by: .seconds(600))])
        let manager = SessionManager(transport: transport)
        let caller = Task { try await manager.data(for: Request(url: base)) }
        // Wait (bounded) until the exchange is in flight, then cancel the session task itself.
        for _ in 0..<2000 where transport.sent.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        let task = try #require(manager.tasks.first)
        task.cancel()
        await expectCode(.cancelled) { try await caller.value }
        #expect(task.state == .completed)
        #expect(!caller.isCancelled, "the caller's Swift task itself was left alone")
    }

    @Test func a307ResendsTheBodyAndA303TurnsAPostIntoAGet() async throws {
        let transport = ScriptedTransport { sent in
            switch sent.request.url.path {
            case "/start": return .redirect(307, to: "/again")
            case "/again": return .redirect(303, to: "/done")
            default: return .json(#"{"ok":true}"#)
            }
        }
        let manager = SessionManager(transport: transport)
        var request = Request(method: .post, url: base)
        request.body = .data(Data("payload".utf8))
        let response = try await manager.data(for: request)
        #expect(response.response.statusCode == 200)
        let sent = transport.sent
        #expect(sent.map(\.request.url.path) == ["/start", "/again", "/done"])
        #expect(sent.map(\.request.method) == [.post, .post, .get])
        #expect(sent.map { String(decoding: $0.body, as: UTF8.self) } == ["payload", "payload", ""])
    }

    @Test func aRetrierSendsAgainAfterAnErrorStatusAndAFailure() async throws {
        let transport = ScriptedTransport(replies: [.status(503), .failure(.connectionFailed), .text("third time")])
        let delays = Recorder<Duration>()
        var configuration = SessionManager.Configuration()
        configuration.sleeper = { delays.append($0) }
        let manager = SessionManager(configuration: configuration, transport: transport, interceptor: RetryPolicy())
        let response = try await manager.data(for: Request(url: base))
        #expect(String(decoding: response.data, as: UTF8.self) == "third time")
        #expect(transport.sent.count == 3)
        #expect(delays.values == [.milliseconds(500), .seconds(1)])
    }

    @Test func aOneShotBodyIsNotRetried() async throws {
        let transport = ScriptedTransport(replies: [.status(503), .text("unreached")])
        let manager = SessionManager(transport: transport, interceptor: RetryPolicy(retryableHTTPMethods: [.put]))
        var request = Request(method: .put, url: base)
        request.body = .oneShotStream(length: 4, SingleChunk(buffer: ByteBuffer(string: "once")))
        let response = try await manager.data(for: request)
        #expect(response.response.statusCode == 503)
        #expect(transport.sent.count == 1)
    }

    struct HookError: Error, Equatable { var tag: String }

    @Test func aHooksErrorKeepsItsIdentity() async throws {
        let transport = ScriptedTransport(replies: [.redirect(307, to: "/next"), .text("unreached")])
        let manager = SessionManager(transport: transport)
        manager.hooks.needNewBodyStream = { _, _ in throw HookError(tag: "mine") }
        var request = Request(method: .post, url: base)
        request.body = .data(Data("x".utf8))
        let error = await expectCode(.hookFailed) { try await manager.data(for: request) }
        #expect(error?.underlyingError as? HookError == HookError(tag: "mine"))

        let direct = ScriptedTransport(replies: [.redirect(307, to: "/next")])
        let passing = SessionManager(transport: direct)
        passing.hooks.needNewBodyStream = { _, _ in throw CourierError(.invalidFile, "the hook's own") }
        let own = await expectCode(.invalidFile) { try await passing.data(for: request) }
        #expect(own?.message == "the hook's own")
    }

    struct StrayError: Error {}

    @Test func aTransportsFaultsArriveAsTheyAreOrAsTransportFailed() async throws {
        let scripted = ScriptedTransport(replies: [.failure(.connectionFailed)])
        await expectCode(.connectionFailed) {
            try await SessionManager(transport: scripted).data(for: Request(url: base))
        }

        let stray = SessionManager(transport: ThrowingTransport())
        let error = await expectCode(.transportFailed) { try await stray.data(for: Request(url: base)) }
        #expect(error?.underlyingError is StrayError)
    }

    @Test func aBodyThatBreaksOffFailsTheTaskWithTheScriptedError() async throws {
        let transport = ScriptedTransport(replies: [.text(String(repeating: "a", count: 100)).breakingOff(after: 10)])
        await expectCode(.connectionFailed) {
            try await SessionManager(transport: transport).data(for: Request(url: base))
        }
    }

    @Test func uploadProgressFromTheTransportReachesTheTask() async throws {
        let transport = ScriptedTransport(replies: [.status(201)])
        let reports = Recorder<Int64>()
        let manager = SessionManager(transport: transport)
        var request = Request(method: .post, url: base)
        request.body = .data(Data(count: 4096))
        let response = try await manager.upload(.data(Data(count: 4096)), with: request) {
            reports.append($0.completedUnitCount)
        }
        #expect(response.response.statusCode == 201)
        #expect(reports.values.last == 4096)
        #expect(transport.sent[0].body.count == 4096)
    }

    @Test func cookiesAndResumeHeadersAreWhatTheTransportSees() async throws {
        let transport = ScriptedTransport(replies: [
            .status(200, headers: [("Set-Cookie", "session=abc; Path=/")]), .text("second"),
        ])
        let manager = SessionManager(transport: transport)
        _ = try await manager.data(for: Request(url: base))
        _ = try await manager.data(for: Request(url: base.appendingPathComponent("next")))
        #expect(transport.sent[1].request.headerFields[.cookie] == "session=abc")
    }

    @Test func downloadsAskForTheLargerReadAheadAndOverridesWin() async throws {
        let transport = ScriptedTransport { _ in .text("body") }
        let manager = SessionManager(transport: transport)
        try await withTemporaryDirectory(named: "courier-readahead") { directory in
            _ = try await manager.data(for: Request(url: base))
            _ = try await manager.download(Request(url: base), to: directory.appendingPathComponent("a"))
            let streamed = try await manager.stream(
                Request(url: base), overrides: TaskOverrides(readAheadLimit: 12_345))
            for try await _ in streamed.body {}
            let task = try manager.downloadTask(with: Request(url: base), to: directory.appendingPathComponent("b"))
            task.resume()
            _ = try await task.response()
            // A data task may still ask for the download's read-ahead up front.
            let becoming = manager.dataTask(
                with: Request(url: base), overrides: TaskOverrides(readAheadLimit: TaskOverrides.downloadReadAheadLimit)
            )
            becoming.resume()
            _ = try await becoming.response()
            let download = TaskOverrides.downloadReadAheadLimit
            #expect(transport.sent.map(\.readAheadLimit) == [nil, download, 12_345, download, download])
        }
    }

    @Test func aDataTaskAHookMakesADownloadRaisesItsReadAhead() async throws {
        let transport = ScriptedTransport { _ in .text("body") }
        let manager = SessionManager(transport: transport)
        try await withTemporaryDirectory(named: "courier-raise") { directory in
            var hooks = SessionHooks()
            hooks.didReceiveResponse = { task, _ in
                guard task.originalRequest.url.path.hasSuffix("file") else { return .allow }
                return .becomeDownload(destination: { _, _ in directory.appendingPathComponent(UUID().uuidString) })
            }
            manager.hooks = hooks

            _ = try await manager.data(for: Request(url: base.appendingPathComponent("data")))
            let became = try await manager.data(for: Request(url: base.appendingPathComponent("file")))
            let chosen = manager.dataTask(
                with: Request(url: base.appendingPathComponent("file")), overrides: TaskOverrides(readAheadLimit: 4096))
            chosen.resume()
            _ = try await chosen.response()

            #expect(became.fileURL != nil)
            #expect(transport.sent.map(\.readAheadLimit) == [nil, nil, 4096])
            // Only the hook's download is raised; a limit the caller chose stays theirs.
            #expect(transport.sent.map(\.raisedReadAheadLimit) == [nil, TaskOverrides.downloadReadAheadLimit, nil])
        }
    }

    /// The run checks once that the task is stopping before it asks the retrier (the caller's
    /// code): a task cancelled while its exchange fails, in a way the transport does not see as a
    /// cancel, asks nobody, sends nothing more, and completes `.cancelled`.
    @Test func aStoppedTaskAsksNoRetrier() async throws {
        struct CancellingTransport: Transport {
            let task = NIOLockedValueBox<SessionTask?>(nil)
            let sends = NIOLockedValueBox(0)
            func send(_ request: Request, context: ExchangeContext) async throws -> TransportResponse {
                sends.withLockedValue { $0 += 1 }
                task.withLockedValue { $0 }?.cancel()
                throw CourierError(.connectionFailed, "the connection closed")
            }
            func shutdown() async throws {}
        }
        struct CountingRetrier: RequestInterceptor {
            let asked = NIOLockedValueBox(0)
            func retry(_ request: Request, response: ResponseHead?, error: CourierError?, retryCount: Int) async
                -> RetryDecision
            {
                asked.withLockedValue { $0 += 1 }
                return .retry
            }
        }
        let transport = CancellingTransport()
        let retrier = CountingRetrier()
        let task = SessionManager(transport: transport, interceptor: retrier).dataTask(with: Request(url: base))
        transport.task.withLockedValue { $0 = task }
        task.resume()
        await expectCode(.cancelled) { try await task.response() }
        #expect(retrier.asked.withLockedValue { $0 } == 0)
        #expect(transport.sends.withLockedValue { $0 } == 1)
    }
}

extension ScriptedSessionTests {
    /// A task keeps the hooks it started with for all its attempts: a hook set during a redirect
    /// applies from the next task on, never to half of one.
    @Test func hooksSetWhileATaskRunsApplyFromTheNextTask() async throws {
        let transport = ScriptedTransport { sent in
            sent.request.url.path == "/start" ? .redirect(302, to: "/end") : .text("body")
        }
        let manager = SessionManager(transport: transport)
        let received = Recorder<String>()
        var hooks = SessionHooks()
        hooks.willPerformRedirection = { [weak manager] _, _, next in
            manager?.hooks.didReceiveData = { task, _ in received.append(task.originalRequest.url.path) }
            return next
        }
        manager.hooks = hooks

        _ = try await manager.data(for: Request(url: base))
        #expect(received.values.isEmpty)
        _ = try await manager.data(for: Request(url: base))
        #expect(received.values == ["/start"])
        #expect(transport.sent.map(\.request.url.path) == ["/start", "/end", "/start", "/end"])
    }
}

/// A transport whose every exchange fails with an error that is not a CourierError.
private struct ThrowingTransport: Transport {
    func send(_ request: Request, context: ExchangeContext) async throws -> TransportResponse {
        throw ScriptedSessionTests.StrayError()
    }

    func shutdown() async throws {}
}

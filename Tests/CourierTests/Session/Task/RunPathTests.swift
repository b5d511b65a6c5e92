import CourierTesting
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import Courier
@testable import CourierCore

/// The one run path of a task, over a scripted transport: an awaited task runs on its caller's
/// Swift task, ``SessionTask/resume()`` runs the same function on a task of its own, and a stop
/// (the handle's cancel, the caller's Swift task, the deadline) reaches whatever the run waits
/// on: the exchange, an interceptor, a hook, a retry delay, a paused reader.
@Suite("Task run path: cancel, deadline, suspend and resume at every wait", .timeLimit(.minutes(2)))
struct RunPathTests {
    let base = URL(string: "http://api.test/run")!

    /// A one-shot signal: `wait()` returns once `fire()` was called, before or after.
    final class Signal: Sendable {
        private let state = NIOLockedValueBox<(fired: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

        func fire() {
            let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
                state.fired = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }

        func wait() async {
            await withCheckedContinuation { continuation in
                let fired = state.withLockedValue { state -> Bool in
                    if !state.fired { state.waiter = continuation }
                    return state.fired
                }
                if fired { continuation.resume() }
            }
        }
    }

    /// An interceptor whose adapter and retrier report that they were reached, then wait as long
    /// as they are let (600 s), unless told to answer at once.
    struct Waiting: RequestInterceptor {
        let reached = Signal()
        var adapts = true
        var retries = true

        func adapt(_ request: Request) async throws -> Request {
            guard adapts else { return request }
            reached.fire()
            try await Task.sleep(for: .seconds(600))
            return request
        }

        func retry(_ request: Request, response: ResponseHead?, error: CourierError?, retryCount: Int) async
            -> RetryDecision
        {
            guard retries else { return .retryWithDelay(.seconds(600)) }
            reached.fire()
            try? await Task.sleep(for: .seconds(600))
            return .doNotRetry
        }
    }

    /// How a test stops the task it started.
    enum Stop: String, CaseIterable, CustomStringConvertible {
        case handle, swiftTask
        var description: String { rawValue }
    }

    /// Runs `request` through `data(for:)` on a Swift task, waits for `reached`, stops it as
    /// `stop` says, and checks that it ends `.cancelled` without its caller's Swift task having
    /// been cancelled by the session.
    private func expectCancelled(
        _ manager: SessionManager, _ request: Request, once reached: Signal, by stop: Stop,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let caller = Task { try await manager.data(for: request) }
        await reached.wait()
        switch stop {
        case .handle:
            let task = try #require(manager.tasks.first, sourceLocation: sourceLocation)
            task.cancel()
        case .swiftTask:
            caller.cancel()
        }
        await expectCode(.cancelled, sourceLocation: sourceLocation) { try await caller.value }
        #expect(manager.tasks.isEmpty, sourceLocation: sourceLocation)
        if stop == .handle { #expect(!caller.isCancelled, "the caller's Swift task was left alone") }
    }

    @Test(arguments: Stop.allCases)
    func aStopBeforeTheHeadEndsTheExchange(by stop: Stop) async throws {
        let reached = Signal()
        let transport = ScriptedTransport { _ in
            reached.fire()
            return .status(200).delayed(by: .seconds(600))
        }
        try await expectCancelled(SessionManager(transport: transport), Request(url: base), once: reached, by: stop)
    }

    @Test(arguments: Stop.allCases)
    func aStopAfterTheHeadEndsTheHookAndTheBody(by stop: Stop) async throws {
        let reached = Signal()
        let manager = SessionManager(transport: ScriptedTransport(replies: [.text("body")]))
        manager.hooks.didReceiveResponse = { _, _ in
            reached.fire()
            try? await Task.sleep(for: .seconds(600))
            return .allow
        }
        try await expectCancelled(manager, Request(url: base), once: reached, by: stop)
    }

    @Test(arguments: Stop.allCases)
    func aStopInTheAdapterEndsIt(by stop: Stop) async throws {
        let interceptor = Waiting()
        let manager = SessionManager(transport: ScriptedTransport(replies: [.text("ok")]), interceptor: interceptor)
        try await expectCancelled(manager, Request(url: base), once: interceptor.reached, by: stop)
    }

    @Test(arguments: Stop.allCases)
    func aStopInTheRetrierEndsIt(by stop: Stop) async throws {
        let interceptor = Waiting(adapts: false)
        let manager = SessionManager(transport: ScriptedTransport(replies: [.status(503)]), interceptor: interceptor)
        try await expectCancelled(manager, Request(url: base), once: interceptor.reached, by: stop)
    }

    @Test(arguments: Stop.allCases)
    func aStopDuringARetryDelayEndsIt(by stop: Stop) async throws {
        let reached = Signal()
        var configuration = SessionManager.Configuration()
        configuration.sleeper = { delay in
            reached.fire()
            try await Task.sleep(for: delay)
        }
        let manager = SessionManager(
            configuration: configuration, transport: ScriptedTransport(replies: [.status(503), .text("unreached")]),
            interceptor: Waiting(adapts: false, retries: false))
        try await expectCancelled(manager, Request(url: base), once: reached, by: stop)
    }

    @Test func theDeadlineEndsARetryDelayAsTimedOut() async throws {
        var configuration = SessionManager.Configuration()
        configuration.sleeper = { try await Task.sleep(for: $0) }
        let transport = ScriptedTransport(replies: [.status(503), .text("unreached")])
        let manager = SessionManager(
            configuration: configuration, transport: transport, interceptor: Waiting(adapts: false, retries: false))
        var request = Request(url: base)
        request.timeoutInterval = 0.2
        let error = await expectCode(.timedOut) { try await manager.data(for: request) }
        #expect(error?.message.contains("0.2 s deadline") == true, "\(String(describing: error))")
        #expect(transport.sent.count == 1)
    }

    /// A transport that keeps no clock: its exchange waits until it is cancelled through its
    /// context, so only the session's deadline can end it.
    struct SilentTransport: Transport {
        func send(_ request: Request, context: ExchangeContext) async throws -> TransportResponse {
            context.recorder?.requestHeadSent()
            context.recorder?.requestSent(bodyBytes: 0)
            let stopped = Signal()
            context.cancellation.onCancel { stopped.fire() }
            await stopped.wait()
            throw CourierError(.cancelled, "the silent exchange was cancelled")
        }

        func shutdown() async throws {}
    }

    @Test func theDeadlineEndsAnExchangeWaitingForItsHeadNamingTheStage() async throws {
        let manager = SessionManager(transport: SilentTransport())
        var request = Request(url: base)
        request.timeoutInterval = 0.2
        let error = await expectCode(.timedOut) { try await manager.data(for: request) }
        #expect(error?.message.contains("waiting for the response") == true, "\(String(describing: error))")
        #expect(manager.tasks.isEmpty)
    }

    /// How a stop reaches a task from outside: the handle's cancel, or its deadline's timer firing.
    enum OutsideStop: String, CaseIterable, CustomStringConvertible {
        case cancel, deadline
        var description: String { rawValue }
    }

    /// A stop that comes after the exchange began but before its transport registered its cancel
    /// action (ScriptedTransport asks its script first, then registers) is remembered and
    /// honoured as the transport registers: the delayed reply never runs out, and the outcome is
    /// the stop's, `.timedOut` naming the stage for the deadline. No clock decides it: the script
    /// stops the task at that exact point, as the deadline's timer would.
    @Test(arguments: OutsideStop.allCases)
    func aStopBeforeTheTransportRegistersIsHonouredOnRegistration(by stop: OutsideStop) async throws {
        let manager = NIOLockedValueBox<SessionManager?>(nil)
        let transport = ScriptedTransport { _ in
            if let task = manager.withLockedValue({ $0 })?.tasks.first {
                switch stop {
                case .cancel: task.cancel()
                case .deadline: task.deadlinePassed()
                }
            }
            return .status(200).delayed(by: .seconds(600))
        }
        let session = SessionManager(transport: transport)
        manager.withLockedValue { $0 = session }
        var request = Request(url: base)
        // Far off: only the simulated timer can end the task before the 600 s reply.
        request.timeoutInterval = 600
        let error = await expectCode(stop == .cancel ? .cancelled : .timedOut) { try await session.data(for: request) }
        if stop == .deadline {
            #expect(error?.message.contains("600.0 s deadline") == true, "\(String(describing: error))")
            #expect(error?.message.contains("waiting for the response") == true, "\(String(describing: error))")
        }
        #expect(transport.sent.count == 1)
        #expect(session.tasks.isEmpty)
    }

    /// A deadline already past as the task starts (a zero or negative interval) ends it before
    /// anything is sent, however fast the transport would answer: the timer does not race it.
    @Test(arguments: [0, -1] as [Double])
    func aDeadlineAlreadyPastEndsTheTaskBeforeItSends(_ interval: Double) async throws {
        let transport = ScriptedTransport(replies: [.text("too late")])
        var request = Request(url: base)
        request.timeoutInterval = interval
        await expectCode(.timedOut) { try await SessionManager(transport: transport).data(for: request) }
        #expect(transport.sent.isEmpty)
    }

    /// The transport's own wording of a stop does not decide the outcome: the session's deadline
    /// makes it `.timedOut` even when the transport says `.cancelled`, and a transport's `.timedOut`
    /// from a clock of its own (an idle-read timer) stays that transport's error, not the deadline.
    @Test func aTransportsOwnTimeoutIsNotTheSessionsDeadline() async throws {
        let transport = ScriptedTransport(replies: [
            .failure(CourierError(.timedOut, "no byte within the read timeout"))
        ])
        var request = Request(url: base)
        request.timeoutInterval = 600
        let error = await expectCode(.timedOut) { try await SessionManager(transport: transport).data(for: request) }
        #expect(error?.message == "no byte within the read timeout")
    }

    @Test func theDeadlineEndsAHookAsTimedOut() async throws {
        let manager = SessionManager(transport: ScriptedTransport(replies: [.text("body")]))
        manager.hooks.didReceiveResponse = { _, _ in
            try? await Task.sleep(for: .seconds(600))
            return .allow
        }
        var request = Request(url: base)
        request.timeoutInterval = 0.2
        await expectCode(.timedOut) { try await manager.data(for: request) }
    }

    @Test func awaitingAnUnstartedTaskRunsItAndResumeRunsItOnItsOwnTask() async throws {
        let transport = ScriptedTransport(replies: [.text("first"), .text("second")])
        let manager = SessionManager(transport: transport)
        let awaited = manager.dataTask(with: Request(url: base))
        #expect(awaited.state == .suspended)
        let first = try await awaited.response()
        #expect(String(decoding: first.data, as: UTF8.self) == "first")
        #expect(awaited.state == .completed)

        let resumed = manager.dataTask(with: Request(url: base))
        resumed.resume()
        resumed.resume()  // a second resume changes nothing
        let second = try await resumed.response()
        #expect(String(decoding: second.data, as: UTF8.self) == "second")
        #expect(transport.sent.count == 2)
        // A waiter that comes late gets the same outcome at once.
        let again = try await resumed.response()
        #expect(again.data == second.data)
    }

    @Test func aTaskCancelledBeforeItStartsNeverSends() async throws {
        let transport = ScriptedTransport(replies: [.text("unreached")])
        let manager = SessionManager(transport: transport)
        let task = manager.dataTask(with: Request(url: base))
        task.cancel()
        await expectCode(.cancelled) { try await task.response() }
        task.resume()
        #expect(task.state == .completed)
        #expect(transport.sent.isEmpty)
    }

    @Test func aTaskSuspendedInFlightWaitsForItsResume() async throws {
        let reached = Signal()
        let manager = SessionManager(transport: ScriptedTransport(replies: [.text("paused body")]))
        let holder = Recorder<SessionTask>()
        manager.hooks.didReceiveResponse = { task, _ in
            // Paused after the head: the body is read only after the resume.
            task.suspend()
            holder.append(task)
            reached.fire()
            return .allow
        }
        let caller = Task { try await manager.data(for: Request(url: base)) }
        await reached.wait()
        let task = try #require(holder.values.first)
        #expect(task.state == .suspended)
        task.resume()
        let response = try await caller.value
        #expect(String(decoding: response.data, as: UTF8.self) == "paused body")
    }

    @Test(arguments: [false, true])
    func aPausedTaskIsStoppedByACancelOrItsDeadline(deadline: Bool) async throws {
        let manager = SessionManager(transport: ScriptedTransport(replies: [.text("never read")]))
        manager.hooks.didReceiveResponse = { task, _ in
            task.suspend()
            if !deadline { task.cancel() }
            return .allow
        }
        var request = Request(url: base)
        if deadline { request.timeoutInterval = 0.2 }
        await expectCode(deadline ? .timedOut : .cancelled) { try await manager.data(for: request) }
    }

    @Test func aCancelAfterTheBodyIsInIsTooLate() async throws {
        let manager = SessionManager(transport: ScriptedTransport(replies: [.text("kept")]))
        let holder = Recorder<SessionTask>()
        manager.hooks.didComplete = { task, _ in
            holder.append(task)
            task.cancel()
        }
        let response = try await manager.data(for: Request(url: base))
        #expect(String(decoding: response.data, as: UTF8.self) == "kept")
        #expect(holder.values.first?.state == .completed)
    }

    @Test func shutdownStopsAnAwaitedTaskWithoutCancellingItsCaller() async throws {
        let reached = Signal()
        let transport = ScriptedTransport { _ in
            reached.fire()
            return .status(200).delayed(by: .seconds(600))
        }
        let manager = SessionManager(transport: transport)
        let caller = Task { try await manager.data(for: Request(url: base)) }
        await reached.wait()
        try await manager.shutdown()
        await expectCode(.cancelled) { try await caller.value }
        #expect(!caller.isCancelled)
    }
}

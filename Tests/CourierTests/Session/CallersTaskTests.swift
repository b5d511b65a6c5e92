import Courier
import CourierTestServer
import Foundation
import Testing

@testable import CourierCore

/// `data(for:)` runs a plain GET on the caller's own Swift task. A cancel that comes from
/// elsewhere (a task handle, `shutdown()`, the deadline) must still stop it, without leaving the
/// caller's Swift task cancelled; and a cancelled caller still cancels the request.
@Suite("Data tasks run on the caller's task", .timeLimit(.minutes(3)))
struct CallersTaskTests {
    /// What the caller saw: the request's outcome and whether its own task was cancelled after.
    struct CallerView: Sendable {
        var error: CourierError?
        var callerWasCancelled: Bool
    }

    static func silentRequest(_ server: TestServer) -> Request {
        // One byte, then nothing for minutes: only a cancel can end it within the suite's limit.
        Request(url: server.url("/fault/drip-forever?interval_ms=60000&max_ms=20000"))
    }

    static func callInBackground(_ manager: SessionManager, _ request: Request) -> Task<CallerView, Never> {
        Task {
            var view = CallerView(error: nil, callerWasCancelled: false)
            do {
                _ = try await manager.data(for: request)
            } catch let error as CourierError {
                view.error = error
            } catch {
                Issue.record("expected a CourierError, got \(error)")
            }
            view.callerWasCancelled = Task.isCancelled
            return view
        }
    }

    /// Waits until the manager has a task for the call (no clock involved).
    static func firstTask(of manager: SessionManager) async -> SessionTask {
        while true {
            if let task = manager.tasks.first, task.state == .running { return task }
            await Task.yield()
        }
    }

    @Test func aCancelThroughTheTaskHandleStopsTheRequestButNotTheCaller() async throws {
        try await withFaultSession(transport: { $0.readTimeout = nil }) { server, manager, _ in
            let caller = Self.callInBackground(manager, Self.silentRequest(server))
            let task = await Self.firstTask(of: manager)
            task.cancel()
            let view = await caller.value
            #expect(view.error?.code == .cancelled)
            #expect(!view.callerWasCancelled)
            #expect(task.state == .completed)
        }
    }

    @Test func shutdownStopsARequestRunningOnTheCallersTask() async throws {
        try await withFaultSession(transport: { $0.readTimeout = nil }) { server, manager, _ in
            let caller = Self.callInBackground(manager, Self.silentRequest(server))
            _ = await Self.firstTask(of: manager)
            try await manager.shutdown()
            let view = await caller.value
            #expect(view.error?.code == .cancelled)
            #expect(!view.callerWasCancelled)
            #expect(manager.tasks.isEmpty)
        }
    }

    @Test func cancellingTheCallerCancelsTheRequest() async throws {
        try await withFaultSession(transport: { $0.readTimeout = nil }) { server, manager, _ in
            let caller = Self.callInBackground(manager, Self.silentRequest(server))
            _ = await Self.firstTask(of: manager)
            caller.cancel()
            let view = await caller.value
            #expect(view.error?.code == .cancelled)
            #expect(manager.tasks.isEmpty)
        }
    }

    @Test func theDeadlineStopsARequestRunningOnTheCallersTask() async throws {
        try await withFaultSession(transport: { $0.readTimeout = nil }) { server, manager, _ in
            var request = Self.silentRequest(server)
            request.timeoutInterval = 0.3
            let view = await Self.callInBackground(manager, request).value
            #expect(view.error?.code == .timedOut)
            #expect(!view.callerWasCancelled)
        }
    }

    @Test func aCancelFromADataHookEndsTheRequest() async throws {
        try await withFaultSession { server, manager, _ in
            manager.hooks.didReceiveData = { task, _ in task.cancel() }
            let request = Request(url: server.url("/fault/drip-forever?interval_ms=10&max_ms=20000"))
            let view = await Self.callInBackground(manager, request).value
            #expect(view.error?.code == .cancelled)
            #expect(!view.callerWasCancelled)
        }
    }

    @Test func plainGetsStillSucceedAndLeaveNoTasks() async throws {
        try await withFaultSession { server, manager, _ in
            for _ in 0..<20 {
                let response = try await manager.data(for: Request(url: server.url("/get")))
                #expect(response.response.statusCode == 200)
            }
            #expect(manager.tasks.isEmpty)
        }
    }
}

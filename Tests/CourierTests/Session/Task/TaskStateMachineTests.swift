import Courier
import Foundation
import NIOCore
import Testing

@testable import CourierCore

/// The machine with plain integers for waiters, so that tests can see which ones it hands back.
typealias TestMachine = TaskStateMachine<Int, Int>

/// Where a task can be when an event arrives.
enum TaskPhase: String, CaseIterable, CustomStringConvertible {
    case notStarted, running, paused, delivering, canceling, expired, finishing, completed
    var description: String { rawValue }

    /// A machine brought to this phase through its own methods.
    func machine() -> TestMachine {
        var machine = TestMachine()
        if self != .notStarted { _ = machine.start() }
        switch self {
        case .paused: _ = machine.suspend()
        case .delivering: _ = machine.beginDelivering()
        case .canceling: _ = machine.cancel(keepingPartialFile: false)
        case .expired: _ = machine.stop(.deadlinePassed)
        case .finishing: _ = machine.complete(failed)
        case .completed:
            _ = machine.complete(failed)
            _ = machine.publish(failed, resumeData: nil)
        case .notStarted, .running: break
        }
        return machine
    }
}

let failed: Result<SessionResponse, CourierError> = .failure(CourierError(.connectionFailed, "refused"))
let cancelledOutcome: Result<SessionResponse, CourierError> = .failure(CourierError(.cancelled, "cancelled"))
let succeeded: Result<SessionResponse, CourierError> = .success(
    SessionResponse(
        request: Request(url: URL(string: "http://127.0.0.1/")!),
        response: ResponseHead(status: .ok, url: URL(string: "http://127.0.0.1/")!), data: Data()))

extension TestMachine.State {
    var phase: String {
        switch self {
        case .pending(.notStarted, _): return "notStarted"
        case .pending(.running, _): return "running"
        case .pending(.paused, _): return "paused"
        case .pending(.delivering, _): return "delivering"
        case .pending(.stopping(.cancelled), _): return "canceling"
        case .pending(.stopping(.deadlinePassed), _): return "expired"
        case .pending(.finishing, _): return "finishing"
        case .completed: return "completed"
        }
    }
}

@Suite("Task state machine: every event in every state, without a network")
struct TaskStateMachineTests {
    @Test(arguments: TaskPhase.allCases)
    func cancel(in phase: TaskPhase) {
        var machine = phase.machine()
        let action = machine.cancel(keepingPartialFile: true)
        switch phase {
        case .notStarted:
            guard case .completeWithoutTransfer = action else { Issue.record("\(action)"); return }
            #expect(machine.state.phase == "finishing")
            #expect(!machine.keepsPartialFile)
        case .running, .paused, .expired:
            guard case .interrupt = action else { Issue.record("\(action)"); return }
            #expect(machine.state.phase == "canceling")
            #expect(machine.readerGate() == .unwind)
            #expect(machine.keepsPartialFile)
            // A cancel wins over whatever the transfer raced to, and over the deadline.
            let completion = machine.complete(succeeded)
            #expect(completion == .deliverCancelled)
        case .delivering, .canceling, .finishing, .completed:
            guard case .none = action else { Issue.record("\(action)"); return }
        }
    }

    @Test(arguments: TaskPhase.allCases)
    func deadline(in phase: TaskPhase) {
        var machine = phase.machine()
        let interruption = machine.stop(.deadlinePassed)
        switch phase {
        case .running, .paused:
            #expect(interruption != nil)
            #expect(machine.state.phase == "expired")
            let delivering = machine.beginDelivering()
            #expect(!delivering)
            let completion = machine.complete(failed)
            #expect(completion == .deliverTimedOut)
        case .notStarted, .delivering, .canceling, .expired, .finishing, .completed:
            // Not started yet, too late, or already stopping: the deadline changes nothing.
            #expect(interruption == nil)
        }
    }

    @Test(arguments: TaskPhase.allCases)
    func delivering(in phase: TaskPhase) {
        var machine = phase.machine()
        let delivering = machine.beginDelivering()
        let allowed: Set<TaskPhase> = [.running, .paused, .delivering]
        #expect(delivering == allowed.contains(phase))
        if delivering {
            // From here a cancel and the deadline are too late.
            guard case .none = machine.cancel(keepingPartialFile: false) else { Issue.record("cancel acted"); return }
            let interruption = machine.stop(.deadlinePassed)
            #expect(interruption == nil)
            let completion = machine.complete(succeeded)
            #expect(completion == .deliver)
        }
    }

    @Test(arguments: TaskPhase.allCases)
    func startAndSuspend(in phase: TaskPhase) {
        var machine = phase.machine()
        let started = machine.start()
        switch (phase, started) {
        case (.notStarted, .run), (.paused, .wake):
            #expect(machine.state.phase == "running")
        case (.running, .none), (.delivering, .none), (.canceling, .none), (.expired, .none),
            (.finishing, .none), (.completed, .none):
            break
        default:
            Issue.record("start in \(phase): \(started)")
        }
        var other = phase.machine()
        let suspended = other.suspend()
        #expect(suspended == (phase == .running))
    }

    @Test(arguments: TaskPhase.allCases)
    func completion(in phase: TaskPhase) {
        var machine = phase.machine()
        switch phase {
        case .finishing, .completed:
            let completion = machine.complete(succeeded)
            #expect(completion == .ignore)
        case .canceling:
            let completion = machine.complete(cancelledOutcome)
            #expect(completion == .deliver)
        case .expired:
            let completion = machine.complete(cancelledOutcome)
            #expect(completion == .deliverTimedOut)
        case .notStarted, .running, .paused, .delivering:
            let completion = machine.complete(failed)
            #expect(completion == .deliver)
        }
        #expect(["finishing", "completed"].contains(machine.state.phase))
        let again = machine.complete(succeeded)
        #expect(again == .ignore)
    }

    @Test func aStopInterruptsTheExchangeTheWaitAndThePausedReaders() {
        var machine = TaskPhase.notStarted.machine()
        guard case .run = machine.start() else { Issue.record("no start"); return }
        let cancelsAtOnce = machine.register(cancelExchange: {})
        #expect(!cancelsAtOnce)
        let waitCancelsAtOnce = machine.register(cancelWait: {})
        #expect(!waitCancelsAtOnce)
        let suspended = machine.suspend()
        #expect(suspended)
        let waits = machine.waitWhilePaused(1)
        #expect(waits)
        let secondWaits = machine.waitWhilePaused(2)
        #expect(secondWaits)
        guard case .interrupt(let transfer, let readers) = machine.cancel(keepingPartialFile: false) else {
            Issue.record("no interruption")
            return
        }
        #expect(transfer.cancelExchange != nil)
        #expect(transfer.cancelWait != nil)
        #expect(readers == [1, 2])
        // No reader waits from here, and a later exchange or wait is stopped as it registers.
        let waitsAfterStop = machine.waitWhilePaused(3)
        #expect(!waitsAfterStop)
        let cancelsLateExchange = machine.register(cancelExchange: {})
        #expect(cancelsLateExchange)
        let cancelsLateWait = machine.register(cancelWait: {})
        #expect(cancelsLateWait)
    }

    @Test func aFinishedWaitIsNoLongerInterrupted() {
        var machine = TaskPhase.running.machine()
        _ = machine.register(cancelWait: {})
        _ = machine.register(cancelWait: nil)
        let interruption = machine.stop(.deadlinePassed)
        #expect(interruption?.transfer.cancelWait == nil)
        let completion = machine.complete(failed)
        #expect(completion == .deliverTimedOut)
    }

    @Test func withoutADeadlineTheStopIsNeverATimeout() {
        var machine = TaskPhase.notStarted.machine()
        _ = machine.start()
        guard case .interrupt = machine.cancel(keepingPartialFile: false) else { Issue.record("no stop"); return }
        let completion = machine.complete(failed)
        #expect(completion == .deliverCancelled)
    }

    @Test(arguments: TaskPhase.allCases)
    func aReaderWaitsOnlyWhenPausedAndUnwindsOnlyWhenStopping(phase: TaskPhase) {
        var machine = phase.machine()
        let gate = machine.readerGate()
        switch phase {
        case .paused: #expect(gate == .wait)
        case .canceling, .expired: #expect(gate == .unwind)
        case .notStarted, .running, .delivering, .finishing, .completed: #expect(gate == .proceed)
        }
        // Looking leaves the state as it was.
        #expect(machine.state.phase == phase.machine().state.phase)
    }

    @Test func resumingAfterASuspendWakesTheReadersThatWaited() {
        var machine = TaskPhase.running.machine()
        let waits = machine.waitWhilePaused(1)
        #expect(!waits)  // running: no wait
        _ = machine.suspend()
        #expect(machine.readerGate() == .wait)
        let waitsWhenPaused = machine.waitWhilePaused(7)
        #expect(waitsWhenPaused)
        guard case .wake(let readers) = machine.start() else { Issue.record("no wake"); return }
        #expect(readers == [7])
        #expect(machine.readerGate() == .proceed)
    }

    @Test func everyWaiterGetsTheOutcomeOnceAndLaterOnesAtOnce() {
        var machine = TaskPhase.running.machine()
        let ready = machine.waitForOutcome(1)
        #expect(ready == nil)
        let secondReady = machine.waitForOutcome(2)
        #expect(secondReady == nil)
        let completion = machine.complete(failed)
        #expect(completion == .deliver)
        // While the completion hooks run, a new waiter still waits for the published outcome.
        let thirdReady = machine.waitForOutcome(3)
        #expect(thirdReady == nil)
        let waiters = machine.publish(failed, resumeData: nil)
        #expect(waiters.first == 1)
        #expect(waiters.more == [2, 3])
        let again = machine.publish(failed, resumeData: nil)
        #expect(again.first == nil && again.more.isEmpty)
        guard case .failure(let error) = machine.waitForOutcome(4) else { Issue.record("no outcome"); return }
        #expect(error.code == .connectionFailed)
    }

    @Test(arguments: TaskPhase.allCases)
    func aWaiterIsKeptInEveryPhaseUntilTheOutcome(phase: TaskPhase) {
        var machine = phase.machine()
        let ready = machine.waitForOutcome(9)
        #expect((ready != nil) == (phase == .completed))
        // Waiting leaves the state as it was.
        #expect(machine.state.phase == phase.machine().state.phase)
        _ = machine.complete(failed)
        let waiters = machine.publish(failed, resumeData: nil)
        #expect(waiters.first == (phase == .completed ? nil : 9))
        #expect(waiters.more.isEmpty)
    }

    @Test func resumeDataIsKeptWithTheOutcome() {
        var machine = TaskPhase.running.machine()
        _ = machine.cancel(keepingPartialFile: true)
        #expect(machine.keepsPartialFile)
        let resumeData = ResumeData(
            url: URL(string: "http://127.0.0.1/f")!, bytesWritten: 3, entityTag: "\"e\"", lastModified: nil,
            partialFileURL: URL(fileURLWithPath: "/tmp/partial"))
        _ = machine.complete(cancelledOutcome)
        #expect(machine.resumeData == nil)
        _ = machine.publish(cancelledOutcome, resumeData: resumeData)
        #expect(machine.resumeData?.bytesWritten == 3)
    }

    @Test func theDeadlineIsNilForNoneAndNeverNegative() {
        let now = NIODeadline.uptimeNanoseconds(1_000)
        #expect(RequestDeadline(seconds: nil, now: now) == nil)
        #expect(RequestDeadline(seconds: .infinity, now: now) == nil)
        #expect(RequestDeadline(seconds: .nan, now: now) == nil)
        #expect(RequestDeadline(seconds: 2e9, now: now) == nil)
        #expect(RequestDeadline(seconds: -3, now: now)?.instant == now)
        #expect(RequestDeadline(seconds: 1.5, now: now)?.instant == now + .milliseconds(1500))
    }
}

import Courier
import Foundation
import NIOCore
import Testing

@testable import CourierCore

/// The machine with plain integers for waiters, so that tests can see which ones it hands back.
typealias TestMachine = TaskStateMachine<Int, Int>

/// Where a task can be when an event arrives.
enum TaskPhase: String, CaseIterable, CustomStringConvertible {
    case notStarted, running, onCallersTask, paused, committing, canceling, expired, completed
    var description: String { rawValue }

    /// A machine brought to this phase through its own methods.
    func machine(deadlineSeconds: Double? = 5) -> TestMachine {
        var machine = TestMachine()
        let deadline = RequestDeadline(seconds: deadlineSeconds)
        switch self {
        case .notStarted:
            break
        case .onCallersTask:
            _ = machine.startOnCallersTask(deadline: deadline)
        case .running, .paused, .committing, .canceling, .expired, .completed:
            _ = machine.resume(deadline: deadline)
        }
        switch self {
        case .paused: _ = machine.suspend()
        case .committing: _ = machine.beginCommit()
        case .canceling: _ = machine.cancel(keepingPartialFile: false)
        case .expired: _ = machine.deadlinePassed()
        case .completed: _ = machine.complete(.failure(CourierError(.connectionFailed, "gone")))
        case .notStarted, .running, .onCallersTask: break
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

@Suite("Task state machine: every event in every state, without a network")
struct TaskStateMachineTests {
    @Test(arguments: TaskPhase.allCases)
    func cancel(in phase: TaskPhase) {
        var machine = phase.machine()
        let action = machine.cancel(keepingPartialFile: true)
        switch phase {
        case .notStarted:
            guard case .completeWithoutTransfer = action else { Issue.record("\(action)"); return }
            #expect(machine.life == .completed)
            #expect(!machine.wantsResumeData)
        case .running, .onCallersTask, .paused, .expired:
            guard case .stop = action else { Issue.record("\(action)"); return }
            #expect(machine.life == .canceling)
            #expect(machine.mustStop)
            #expect(machine.wantsResumeData)
            // A cancel wins over whatever the transfer raced to, and over the deadline.
            let completion = machine.complete(succeeded)
            #expect(completion == .deliverCancelled)
        case .committing, .canceling, .completed:
            guard case .none = action else { Issue.record("\(action)"); return }
        }
    }

    @Test(arguments: TaskPhase.allCases)
    func deadline(in phase: TaskPhase) {
        var machine = phase.machine(deadlineSeconds: 2.5)
        let stop = machine.deadlinePassed()
        switch phase {
        case .running, .onCallersTask, .paused, .expired:
            #expect(stop != nil)
            #expect(machine.hasExpired)
            let committed = machine.beginCommit()
            #expect(!committed)
            let completion = machine.complete(failed)
            #expect(completion == .deliverTimedOut(seconds: 2.5))
        case .notStarted, .committing, .canceling, .completed:
            // Not started yet, too late, or already stopping: the deadline changes nothing.
            #expect(stop == nil)
        }
    }

    @Test(arguments: TaskPhase.allCases)
    func commit(in phase: TaskPhase) {
        var machine = phase.machine()
        let committed = machine.beginCommit()
        let allowed: Set<TaskPhase> = [.running, .onCallersTask, .paused, .committing]
        #expect(committed == allowed.contains(phase))
        if committed {
            // From here a cancel and the deadline are too late.
            guard case .none = machine.cancel(keepingPartialFile: false) else { Issue.record("cancel acted"); return }
            let stop = machine.deadlinePassed()
            #expect(stop == nil)
            let completion = machine.complete(succeeded)
            #expect(completion == .deliver)
        }
    }

    @Test(arguments: TaskPhase.allCases)
    func resumeAndSuspend(in phase: TaskPhase) {
        var machine = phase.machine()
        let resumed = machine.resume(deadline: nil)
        switch (phase, resumed) {
        case (.notStarted, .startWork), (.paused, .openGates):
            #expect(machine.life == .running)
        case (.running, .none), (.onCallersTask, .none), (.committing, .none), (.canceling, .none),
            (.expired, .none), (.completed, .none):
            break
        default:
            Issue.record("resume in \(phase): \(resumed)")
        }
        var other = phase.machine()
        let expected: TestMachine.SuspendAction =
            [.running, .onCallersTask, .expired].contains(phase) ? .suspended : .none
        let suspended = other.suspend()
        #expect(suspended == expected)
    }

    @Test(arguments: TaskPhase.allCases)
    func completion(in phase: TaskPhase) {
        var machine = phase.machine()
        switch phase {
        case .completed:
            let completion = machine.complete(succeeded)
            #expect(completion == .ignore)
        case .canceling:
            let completion = machine.complete(cancelledOutcome)
            #expect(completion == .deliver)
        case .expired:
            let completion = machine.complete(cancelledOutcome)
            #expect(completion == .deliverTimedOut(seconds: 5))
        case .notStarted, .running, .onCallersTask, .paused, .committing:
            let completion = machine.complete(failed)
            #expect(completion == .deliver)
        }
        #expect(machine.life == .completed)
        let completion5 = machine.complete(succeeded)
        #expect(completion5 == .ignore)
    }

    @Test func anOwnTaskIsStoppedByCancellingItAndTheExchange() async {
        var machine = TaskPhase.notStarted.machine()
        guard case .startWork = machine.resume(deadline: nil) else { Issue.record("no start"); return }
        let work = Task<Void, Never> {}
        let cancelsWork = machine.workDidStart(work)
        #expect(!cancelsWork)
        let cancelsAtOnce = machine.register(cancelExchange: {})
        #expect(!cancelsAtOnce)
        _ = machine.suspend()
        let waits = machine.wait(at: 1)
        #expect(waits)
        let secondWaits = machine.wait(at: 2)
        #expect(secondWaits)
        guard case .stop(let stop) = machine.cancel(keepingPartialFile: false) else { Issue.record("no stop"); return }
        #expect(stop.work != nil)
        #expect(stop.cancelExchange != nil)
        #expect(stop.gates == [1, 2])
        // The gate stays open from here, and a later exchange is cancelled as it registers.
        let waitsAfterStop = machine.wait(at: 3)
        #expect(!waitsAfterStop)
        let cancelsLateExchange = machine.register(cancelExchange: {})
        #expect(cancelsLateExchange)
    }

    @Test func aTransferOnTheCallersTaskIsNeverStoppedByCancellingThatTask() {
        var machine = TaskPhase.notStarted.machine()
        let started = machine.startOnCallersTask(deadline: nil)
        #expect(started)
        let startedAgain = machine.startOnCallersTask(deadline: nil)
        #expect(!startedAgain)
        #expect(machine.runsOnCallersTask)
        let cancelsAtOnce = machine.register(cancelExchange: {})
        #expect(!cancelsAtOnce)
        let stop = machine.deadlinePassed()
        #expect(stop?.work == nil)
        #expect(stop?.cancelExchange != nil)
        let completion = machine.complete(failed)
        #expect(completion == .deliver)  // no deadline was set, so no .timedOut either
    }

    @Test func aStopBeforeTheWorkIsRecordedCancelsItWhenItIs() {
        var machine = TaskPhase.notStarted.machine()
        _ = machine.resume(deadline: nil)
        guard case .stop(let stop) = machine.cancel(keepingPartialFile: false) else { Issue.record("no stop"); return }
        #expect(stop.work == nil)
        let cancelsWork = machine.workDidStart(Task<Void, Never> {})
        #expect(cancelsWork)
    }

    @Test func resumingAfterASuspendWakesTheReadersThatWaited() {
        var machine = TaskPhase.running.machine()
        let waits = machine.wait(at: 1)
        #expect(!waits)  // running: no wait
        _ = machine.suspend()
        #expect(machine.isPaused)
        let waitsWhenPaused = machine.wait(at: 7)
        #expect(waitsWhenPaused)
        guard case .openGates(let gates) = machine.resume(deadline: nil) else { Issue.record("no gates"); return }
        #expect(gates == [7])
        let left = machine.takeGates()
        #expect(left.isEmpty)
    }

    @Test func everyWaiterGetsTheOutcomeOnceAndLaterOnesAtOnce() {
        var machine = TaskPhase.running.machine()
        let ready = machine.waitForOutcome(1)
        #expect(ready == nil)
        let secondReady = machine.waitForOutcome(2)
        #expect(secondReady == nil)
        let thirdReady = machine.waitForOutcome(3)
        #expect(thirdReady == nil)
        let completion = machine.complete(failed)
        #expect(completion == .deliver)
        let (first, more) = machine.publish(failed)
        #expect(first == 1)
        #expect(more == [2, 3])
        let again = machine.publish(failed)
        #expect(again.0 == nil && again.1.isEmpty)
        guard case .failure(let error) = machine.waitForOutcome(4) else { Issue.record("no outcome"); return }
        #expect(error.code == .connectionFailed)
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

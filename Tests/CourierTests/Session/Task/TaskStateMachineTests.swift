import Foundation
import NIOCore
import Testing

@testable import Courier

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
            let answer1 = machine.complete(succeeded)
            #expect(answer1 == .deliverCancelled)
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
            let answer2 = machine.beginCommit()
            #expect(!answer2)
            let answer3 = machine.complete(failed)
            #expect(answer3 == .deliverTimedOut(seconds: 2.5))
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
            let answer4 = machine.deadlinePassed()
            #expect(answer4 == nil)
            let answer5 = machine.complete(succeeded)
            #expect(answer5 == .deliver)
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
        let expected: TestMachine.SuspendAction = [.running, .onCallersTask, .expired].contains(phase) ? .suspended : .none
        let answer6 = other.suspend()
        #expect(answer6 == expected)
    }

    @Test(arguments: TaskPhase.allCases)
    func completion(in phase: TaskPhase) {
        var machine = phase.machine()
        switch phase {
        case .completed:
            let answer7 = machine.complete(succeeded)
            #expect(answer7 == .ignore)
        case .canceling:
            let answer8 = machine.complete(cancelledOutcome)
            #expect(answer8 == .deliver)
        case .expired:
            let answer9 = machine.complete(cancelledOutcome)
            #expect(answer9 == .deliverTimedOut(seconds: 5))
        case .notStarted, .running, .onCallersTask, .paused, .committing:
            let answer10 = machine.complete(failed)
            #expect(answer10 == .deliver)
        }
        #expect(machine.life == .completed)
        let answer11 = machine.complete(succeeded)
        #expect(answer11 == .ignore)
    }

    @Test func anOwnTaskIsStoppedByCancellingItAndTheExchange() async {
        var machine = TaskPhase.notStarted.machine()
        guard case .startWork = machine.resume(deadline: nil) else { Issue.record("no start"); return }
        let work = Task<Void, Never> {}
        let answer12 = machine.workDidStart(work)
        #expect(!answer12)
        let answer13 = machine.register(cancelExchange: {})
        #expect(!answer13)
        _ = machine.suspend()
        let answer14 = machine.wait(at: 1)
        #expect(answer14)
        let answer15 = machine.wait(at: 2)
        #expect(answer15)
        guard case .stop(let stop) = machine.cancel(keepingPartialFile: false) else { Issue.record("no stop"); return }
        #expect(stop.work != nil)
        #expect(stop.cancelExchange != nil)
        #expect(stop.gates == [1, 2])
        // The gate stays open from here, and a later exchange is cancelled as it registers.
        let answer16 = machine.wait(at: 3)
        #expect(!answer16)
        let answer17 = machine.register(cancelExchange: {})
        #expect(answer17)
    }

    @Test func aTransferOnTheCallersTaskIsNeverStoppedByCancellingThatTask() {
        var machine = TaskPhase.notStarted.machine()
        let answer18 = machine.startOnCallersTask(deadline: nil)
        #expect(answer18)
        let answer19 = machine.startOnCallersTask(deadline: nil)
        #expect(!answer19)
        #expect(machine.runsOnCallersTask)
        let answer20 = machine.register(cancelExchange: {})
        #expect(!answer20)
        let stop = machine.deadlinePassed()
        #expect(stop?.work == nil)
        #expect(stop?.cancelExchange != nil)
        let answer21 = machine.complete(failed)
        #expect(answer21 == .deliver)  // no deadline was set, so no .timedOut either
    }

    @Test func aStopBeforeTheWorkIsRecordedCancelsItWhenItIs() {
        var machine = TaskPhase.notStarted.machine()
        _ = machine.resume(deadline: nil)
        guard case .stop(let stop) = machine.cancel(keepingPartialFile: false) else { Issue.record("no stop"); return }
        #expect(stop.work == nil)
        let answer22 = machine.workDidStart(Task<Void, Never> {})
        #expect(answer22)
    }

    @Test func resumingAfterASuspendWakesTheReadersThatWaited() {
        var machine = TaskPhase.running.machine()
        let answer23 = machine.wait(at: 1)
        #expect(!answer23)  // running: no wait
        _ = machine.suspend()
        #expect(machine.isPaused)
        let answer24 = machine.wait(at: 7)
        #expect(answer24)
        guard case .openGates(let gates) = machine.resume(deadline: nil) else { Issue.record("no gates"); return }
        #expect(gates == [7])
        let answer25 = machine.takeGates()
        #expect(answer25.isEmpty)
    }

    @Test func everyWaiterGetsTheOutcomeOnceAndLaterOnesAtOnce() {
        var machine = TaskPhase.running.machine()
        let answer26 = machine.waitForOutcome(1)
        #expect(answer26 == nil)
        let answer27 = machine.waitForOutcome(2)
        #expect(answer27 == nil)
        let answer28 = machine.waitForOutcome(3)
        #expect(answer28 == nil)
        let answer29 = machine.complete(failed)
        #expect(answer29 == .deliver)
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

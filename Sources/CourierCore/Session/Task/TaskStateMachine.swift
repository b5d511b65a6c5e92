import NIOCore

/// Every piece of a task's state that more than one thread touches, as a value that decides
/// and returns what to do, and does no I/O itself.
///
/// The public handle (``SessionTask``) keeps one of these under a lock; the caller's threads
/// (resume, suspend, cancel, waiting for the outcome), the deadline timer on an event loop, the
/// transport's callbacks (upload progress, the exchange's cancel action) and the driver all go
/// through it. Each method changes the state and returns an action for the caller to perform
/// once the lock is released (resume a continuation, cancel a Swift task, stop an exchange), so
/// nothing a continuation or a cancellation handler runs can re-enter the lock.
///
/// Life states follow URLSessionTask: suspended (before the first resume, or paused), running,
/// committing (the whole body is in; too late to cancel), canceling and completed. The machine
/// makes sure the outcome is delivered exactly once, that a cancelled task reports `.cancelled`
/// even when its transfer raced to another outcome, and that a task stopped by its deadline
/// reports `.timedOut`.
///
/// Generic over the two kinds of waiter so that its tests can use plain values; the task uses
/// continuations.
struct TaskStateMachine<Waiter, Gate> {
    enum Life: Sendable, Equatable {
        case suspended(hasStarted: Bool)
        case running
        /// The whole body is in and the outcome is being put in place (a download's file moved):
        /// too late to cancel, so a cancel now does nothing.
        case committing
        case canceling
        case completed
    }

    /// How to stop a transfer in flight; performed outside the lock.
    struct Stop {
        /// The task's own Swift task, when it has one: cancelling it wakes every wait of the driver.
        var work: Task<Void, Never>?
        /// The exchange in flight, as its transport registered it.
        var cancelExchange: (@Sendable () -> Void)?
        /// Readers paused at the gate, woken so that they see the stop.
        var gates: [Gate] = []
    }

    enum ResumeAction {
        /// First resume: start the driver on a Swift task of its own, then report it with ``workDidStart(_:)``.
        case startWork
        /// Resume after a suspend: wake the paused readers.
        case openGates([Gate])
        case none
    }

    enum SuspendAction: Equatable {
        /// Paused: readers wait at their next chunk; tell the event monitors.
        case suspended
        case none
    }

    enum CancelAction {
        /// Never started: deliver `.cancelled` now (the task is already completed; ``publish(_:)`` it).
        case completeWithoutTransfer
        /// Stop the transfer; it completes when it has unwound.
        case stop(Stop)
        case none
    }

    enum CompletionAction: Equatable {
        /// Deliver the outcome as it is.
        case deliver
        /// Deliver `.cancelled` instead: a cancel came before the outcome.
        case deliverCancelled
        /// Deliver `.timedOut` instead: the deadline passed before the outcome.
        case deliverTimedOut(seconds: Double)
        /// Already completed; drop this outcome.
        case ignore
    }

    private(set) var life: Life = .suspended(hasStarted: false)
    /// The whole-task deadline, fixed when the transfer starts; nil for none.
    private(set) var deadline: RequestDeadline?
    /// The deadline passed before the task committed; it unwinds and reports `.timedOut`.
    private(set) var hasExpired = false
    /// A stop was handed out: an exchange that registers from now on is cancelled at once.
    private(set) var stopRequested = false
    /// The transfer runs on the caller's Swift task, which must never be cancelled by the task:
    /// it is stopped through the exchange's cancel action only.
    private(set) var runsOnCallersTask = false
    private var work: Task<Void, Never>?
    private var cancelExchange: (@Sendable () -> Void)?
    private var gates: [Gate] = []

    /// Callers waiting for the outcome: nearly always exactly one, kept out of an array so that
    /// one waiter costs no allocation.
    private var waiter: Waiter?
    private var moreWaiters: [Waiter] = []
    private(set) var result: Result<SessionResponse, CourierError>?

    /// A cancel asked for resume data: a download that stops keeps its partial file.
    private(set) var wantsResumeData = false
    /// What a cancelled download left to continue from.
    var resumeData: ResumeData?

    /// The request going out now, once it differs from the original one (nil until then, so that
    /// a task whose request never changes copies nothing).
    var currentRequest: Request?
    /// The final response head, once it has arrived.
    var response: ResponseHead?
    var uploadProgress = ProgressTracker()
    var downloadProgress = ProgressTracker()

    /// True while a reader should wait (suspended after starting).
    var isPaused: Bool { life == .suspended(hasStarted: true) }

    /// True once the transfer must unwind: cancelled, or past its deadline.
    var mustStop: Bool { life == .canceling || hasExpired }

    // MARK: Starting, pausing, stopping

    /// Starts the task on a Swift task of its own, or lets a paused one read again.
    mutating func resume(deadline: RequestDeadline?) -> ResumeAction {
        guard case .suspended(let hasStarted) = life else { return .none }
        life = .running
        if hasStarted { return .openGates(takeGates()) }
        self.deadline = deadline
        return .startWork
    }

    /// Starts the task on the caller's Swift task; false when it was already started or cancelled.
    mutating func startOnCallersTask(deadline: RequestDeadline?) -> Bool {
        guard life == .suspended(hasStarted: false) else { return false }
        life = .running
        runsOnCallersTask = true
        self.deadline = deadline
        return true
    }

    /// The Swift task that ``ResumeAction/startWork`` asked for exists: true when a stop came in
    /// between and it must be cancelled at once.
    mutating func workDidStart(_ work: Task<Void, Never>) -> Bool {
        guard life != .completed else { return false }
        self.work = work
        return stopRequested
    }

    mutating func suspend() -> SuspendAction {
        guard life == .running else { return .none }
        life = .suspended(hasStarted: true)
        return .suspended
    }

    mutating func cancel(keepingPartialFile: Bool) -> CancelAction {
        switch life {
        case .suspended(hasStarted: false):
            life = .completed
            return .completeWithoutTransfer
        case .suspended(hasStarted: true), .running:
            life = .canceling
            wantsResumeData = keepingPartialFile
            return .stop(takeStop())
        case .committing, .canceling, .completed:
            return .none
        }
    }

    /// The deadline passed: the stop to perform, or nil when the task already committed its
    /// outcome or is over.
    mutating func deadlinePassed() -> Stop? {
        switch life {
        case .running, .suspended(hasStarted: true):
            hasExpired = true
            return takeStop()
        case .suspended(hasStarted: false), .committing, .canceling, .completed:
            return nil
        }
    }

    /// Keeps `cancelExchange` as the way to stop the exchange now in flight (replacing an earlier
    /// one); true when a stop was already requested and it must be called at once.
    mutating func register(cancelExchange: @escaping @Sendable () -> Void) -> Bool {
        if stopRequested { return true }
        self.cancelExchange = cancelExchange
        return false
    }

    /// A reader asks to wait at the gate: false when it must not wait (not paused, or stopping);
    /// the caller then resumes `gate` itself.
    mutating func wait(at gate: Gate) -> Bool {
        guard isPaused, !stopRequested else { return false }
        gates.append(gate)
        return true
    }

    /// Wakes every reader waiting at the gate (their Swift task was cancelled).
    mutating func takeGates() -> [Gate] {
        defer { gates = [] }
        return gates
    }

    private mutating func takeStop() -> Stop {
        stopRequested = true
        defer { cancelExchange = nil }
        // A transfer on the caller's task is never stopped by cancelling a Swift task.
        return Stop(work: runsOnCallersTask ? nil : work, cancelExchange: cancelExchange, gates: takeGates())
    }

    // MARK: Finishing

    /// The transfer has received everything: true to go on and deliver the outcome (a cancel
    /// arriving from now on is too late), false when a cancel or the deadline came first.
    mutating func beginCommit() -> Bool {
        if hasExpired { return false }
        switch life {
        case .running, .suspended(hasStarted: true):
            life = .committing
            return true
        case .committing:
            return true
        case .suspended(hasStarted: false), .canceling, .completed:
            return false
        }
    }

    /// The transfer's outcome: what to deliver in its place. The caller builds the replacement
    /// error, runs its completion hooks, then ``publish(_:)``es the outcome.
    mutating func complete(_ outcome: Result<SessionResponse, CourierError>) -> CompletionAction {
        let wasCanceling = life == .canceling
        guard life != .completed else { return .ignore }
        life = .completed
        work = nil
        cancelExchange = nil
        if wasCanceling {
            if case .failure(let error) = outcome, error.code == .cancelled { return .deliver }
            return .deliverCancelled
        }
        if hasExpired, case .failure = outcome, let deadline { return .deliverTimedOut(seconds: deadline.seconds) }
        return .deliver
    }

    /// Stores the outcome and hands back every waiter to resume with it.
    mutating func publish(_ outcome: Result<SessionResponse, CourierError>) -> (Waiter?, [Waiter]) {
        result = outcome
        defer {
            waiter = nil
            moreWaiters = []
        }
        return (waiter, moreWaiters)
    }

    /// The outcome when there is one; otherwise keeps `waiter` to resume at ``publish(_:)``.
    mutating func waitForOutcome(_ waiter: Waiter) -> Result<SessionResponse, CourierError>? {
        if let result { return result }
        if self.waiter == nil {
            self.waiter = waiter
        } else {
            moreWaiters.append(waiter)
        }
        return nil
    }
}

extension TaskStateMachine: Sendable where Waiter: Sendable, Gate: Sendable {}

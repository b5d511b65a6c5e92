/// A task's life as states that hold what is valid in them; every event is a method that moves
/// the state on and returns an action for the caller to perform once the lock is released.
///
/// The public handle (``SessionTask``) keeps one of these under a lock; the caller's threads
/// (resume, suspend, cancel, waiting for the outcome), the deadline timer on an event loop, the
/// transport (its exchange's cancel action) and the run itself all go through it. Actions run
/// outside the lock (resume a continuation, stop an exchange), so nothing they call can
/// re-enter it. It is the only place that says whether the task is stopping, and the only place
/// that decides that an outcome is `.cancelled` or `.timedOut` instead of what the run reached.
///
/// States follow URLSessionTask: not started, running, paused, delivering (the whole body is in;
/// too late to cancel), stopping (cancelled or out of time, unwinding) and completed.
///
/// Generic over the two kinds of waiter so that its tests can use plain values; the task uses
/// continuations.
struct TaskStateMachine<Waiter, PauseWaiter> {
    /// Why a task stops before its outcome.
    enum StopReason: Equatable {
        /// Cancelled; a download that was asked to keeps its partial file for resume data.
        case cancelled(keepingPartialFile: Bool)
        /// Its deadline passed.
        case deadlinePassed
    }

    /// Callers waiting for the outcome: nearly always one or none, kept out of an array so that
    /// one waiter costs no allocation.
    struct Waiters {
        var first: Waiter?
        var more: [Waiter] = []

        mutating func add(_ waiter: Waiter) {
            if first == nil { first = waiter } else { more.append(waiter) }
        }
    }

    /// What a started, unfinished transfer holds: what stops it, performed outside the lock.
    struct Transfer {
        /// Stops the exchange in flight, as its transport registered it.
        var cancelExchange: (@Sendable () -> Void)?
        /// Stops what the run waits on besides the exchange: an interceptor, a hook, a retry delay.
        var cancelWait: (@Sendable () -> Void)?
    }

    /// Where a task without its outcome yet stands.
    enum Phase {
        case notStarted
        case running(Transfer)
        /// Suspended after it started: readers wait at their next chunk.
        case paused(Transfer, pausedReaders: [PauseWaiter])
        /// The whole body is in and the outcome is being put in place (a download's file moved):
        /// too late to cancel, and past the deadline's reach.
        case delivering
        /// Cancelled or out of time: the run unwinds; an exchange that registers now is stopped.
        case stopping(StopReason)
        /// The outcome is decided; completion hooks run before the waiters get it.
        case finishing
    }

    enum State {
        /// Until the outcome is published: where the task stands, and who waits for the outcome.
        case pending(Phase, Waiters)
        // Boxed: the outcome is large, and a state that holds it inline is copied whole (an
        // outlined copy through the enum's value witness) each time a query such as ``readerGate()``
        // matches a case, several times per request; boxed, matching another case copies nothing.
        indirect case completed(Result<SessionResponse, CourierError>, resumeData: ResumeData?)
    }

    enum StartAction {
        /// First start: run the transfer (here, or on a task of its own).
        case run
        /// Resume after a suspend: wake the paused readers.
        case wake([PauseWaiter])
        case none
    }

    enum CancelAction {
        /// Never started: it is finished with `.cancelled` now; ``publish(_:resumeData:)`` that.
        case completeWithoutTransfer
        /// Stop the transfer and wake its paused readers; it completes when it has unwound.
        case interrupt(Transfer, pausedReaders: [PauseWaiter])
        case none
    }

    enum CompletionAction: Equatable {
        /// Deliver the outcome as it is.
        case deliver
        /// Deliver `.cancelled` instead: a cancel came before the outcome.
        case deliverCancelled
        /// Deliver `.timedOut` instead: the deadline passed before the outcome.
        case deliverTimedOut
        /// Already finished; drop this outcome.
        case ignore
    }

    private(set) var state: State = .pending(.notStarted, Waiters())

    /// The request going out now, once it differs from the original one (nil until then, so that
    /// a task whose request never changes copies nothing).
    var currentRequest: Request?
    /// The final response head, once it has arrived.
    private(set) var response: ResponseHead?
    var uploadProgress = ProgressTracker()
    var downloadProgress = ProgressTracker()

    /// What a reader does at its next step: go on, wait (paused) or unwind (stopping).
    enum ReaderGate {
        case proceed, wait, unwind
    }

    /// Whether the task is paused, and whether it is stopping (cancelled or past its deadline:
    /// the transfer must unwind), in one look, which readers take before every attempt and
    /// body chunk. Mutating only to look without a copy: matching `state` where it is stored
    /// copies its whole payload first (an outlined copy, several per request); moved out, it is
    /// matched in place and moved back.
    mutating func readerGate() -> ReaderGate {
        var taken = State.pending(.notStarted, Waiters())
        swap(&taken, &state)
        defer { swap(&taken, &state) }
        switch taken {
        case .pending(.paused, _): return .wait
        case .pending(.stopping, _): return .unwind
        case .pending, .completed: return .proceed
        }
    }

    /// A download that stops now keeps its partial file: it was cancelled asking for resume data.
    var keepsPartialFile: Bool {
        if case .pending(.stopping(.cancelled(keepingPartialFile: true)), _) = state { return true }
        return false
    }

    var resumeData: ResumeData? {
        if case .completed(_, let resumeData) = state { return resumeData }
        return nil
    }

    // MARK: Starting, pausing, stopping

    /// Starts the task, or lets a paused one read again.
    mutating func start() -> StartAction {
        switch state {
        case .pending(.notStarted, let waiters):
            state = .pending(.running(Transfer()), waiters)
            return .run
        case .pending(.paused(let transfer, let readers), let waiters):
            state = .pending(.running(transfer), waiters)
            return .wake(readers)
        case .pending, .completed:
            return .none
        }
    }

    /// Pauses a running task; true when it was running.
    mutating func suspend() -> Bool {
        guard case .pending(.running(let transfer), let waiters) = state else { return false }
        state = .pending(.paused(transfer, pausedReaders: []), waiters)
        return true
    }

    mutating func cancel(keepingPartialFile: Bool) -> CancelAction {
        let reason = StopReason.cancelled(keepingPartialFile: keepingPartialFile)
        if let stopped = stop(reason) { return .interrupt(stopped.transfer, pausedReaders: stopped.pausedReaders) }
        switch state {
        case .pending(.notStarted, let waiters):
            state = .pending(.finishing, waiters)
            return .completeWithoutTransfer
        case .pending(.stopping(.deadlinePassed), let waiters):
            // A cancel wins over the deadline; what stops the transfer was handed out already.
            state = .pending(.stopping(reason), waiters)
            return .interrupt(Transfer(), pausedReaders: [])
        case .pending, .completed:
            return .none
        }
    }

    /// Stops a running or paused transfer for `reason` (the deadline's; a cancel goes through
    /// ``cancel(keepingPartialFile:)``): what stops it and the paused readers to wake, so that they
    /// see the stop; nil when the task is not started, delivering, stopping or over.
    mutating func stop(_ reason: StopReason) -> (transfer: Transfer, pausedReaders: [PauseWaiter])? {
        switch state {
        case .pending(.running(let transfer), let waiters):
            state = .pending(.stopping(reason), waiters)
            return (transfer, [])
        case .pending(.paused(let transfer, let readers), let waiters):
            state = .pending(.stopping(reason), waiters)
            return (transfer, readers)
        case .pending, .completed:
            return nil
        }
    }

    /// Keeps `cancelExchange` as the way to stop the exchange now in flight (replacing an earlier
    /// one); true when the task is stopping and it must be called at once.
    mutating func register(cancelExchange: @escaping @Sendable () -> Void) -> Bool {
        updateTransfer { $0.cancelExchange = cancelExchange }
    }

    /// Keeps `cancelWait` as the way to stop what the run now waits on (nil when that wait is
    /// over); true when the task is stopping and it must be called at once.
    mutating func register(cancelWait: (@Sendable () -> Void)?) -> Bool {
        updateTransfer { $0.cancelWait = cancelWait }
    }

    private mutating func updateTransfer(_ change: (inout Transfer) -> Void) -> Bool {
        switch state {
        case .pending(.running(var transfer), let waiters):
            change(&transfer)
            state = .pending(.running(transfer), waiters)
        case .pending(.paused(var transfer, let readers), let waiters):
            change(&transfer)
            state = .pending(.paused(transfer, pausedReaders: readers), waiters)
        case .pending(.stopping, _):
            return true
        case .pending, .completed:
            break
        }
        return false
    }

    /// A reader asks to wait until resumed: false when it must not wait (not paused); the
    /// caller then resumes `reader` itself.
    mutating func waitWhilePaused(_ reader: PauseWaiter) -> Bool {
        guard case .pending(.paused(let transfer, var readers), let waiters) = state else { return false }
        readers.append(reader)
        state = .pending(.paused(transfer, pausedReaders: readers), waiters)
        return true
    }

    // MARK: Progress the handle shows

    /// Keeps the final response head and says what its body's reader does first, in the same
    /// turn of the lock (see ``readerGate()``).
    mutating func receive(_ head: ResponseHead) -> ReaderGate {
        response = head
        return readerGate()
    }

    // MARK: Finishing

    /// The transfer has received everything: true to go on and deliver the outcome (a cancel or
    /// the deadline arriving from now on is too late), false when one came first.
    mutating func beginDelivering() -> Bool {
        switch state {
        case .pending(.running, let waiters), .pending(.paused, let waiters):
            state = .pending(.delivering, waiters)
            return true
        case .pending(.delivering, _):
            return true
        case .pending, .completed:
            return false
        }
    }

    /// The transfer's outcome: what to deliver in its place. The caller builds the replacement
    /// error, runs its completion hooks, then ``publish(_:resumeData:)``es what it delivers.
    mutating func complete(_ outcome: Result<SessionResponse, CourierError>) -> CompletionAction {
        guard case .pending(let phase, let waiters) = state else { return .ignore }
        let action: CompletionAction
        switch phase {
        case .finishing:
            return .ignore
        case .notStarted, .running, .paused, .delivering:
            action = .deliver
        case .stopping(.cancelled):
            let isCancelled = if case .failure(let error) = outcome { error.code == .cancelled } else { false }
            action = isCancelled ? .deliver : .deliverCancelled
        case .stopping(.deadlinePassed):
            action = .deliverTimedOut
        }
        state = .pending(.finishing, waiters)
        return action
    }

    /// Keeps the delivered outcome, and hands back every waiter to resume with it.
    mutating func publish(_ outcome: Result<SessionResponse, CourierError>, resumeData: ResumeData?) -> Waiters {
        guard case .pending(.finishing, let waiters) = state else { return Waiters() }
        state = .completed(outcome, resumeData: resumeData)
        return waiters
    }

    /// The outcome when there is one; otherwise keeps `waiter` to resume when it comes.
    mutating func waitForOutcome(_ waiter: Waiter) -> Result<SessionResponse, CourierError>? {
        switch state {
        case .completed(let result, _):
            return result
        case .pending(let phase, var waiters):
            waiters.add(waiter)
            state = .pending(phase, waiters)
            return nil
        }
    }
}

extension TaskStateMachine: Sendable where Waiter: Sendable, PauseWaiter: Sendable {}
extension TaskStateMachine.State: Sendable where Waiter: Sendable, PauseWaiter: Sendable {}
extension TaskStateMachine.Phase: Sendable where PauseWaiter: Sendable {}
extension TaskStateMachine.Waiters: Sendable where Waiter: Sendable {}

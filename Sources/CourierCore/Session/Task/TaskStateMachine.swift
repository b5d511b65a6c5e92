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

    /// What a started, unfinished transfer holds.
    struct Transfer {
        var waiters: Waiters
        /// Stops the exchange in flight, as its transport registered it.
        var cancelExchange: (@Sendable () -> Void)?
        /// Stops what the run waits on besides the exchange: an interceptor, a hook, a retry delay.
        var cancelWait: (@Sendable () -> Void)?
    }

    enum State {
        case notStarted(Waiters)
        case running(Transfer)
        /// Suspended after it started: readers wait at their next chunk.
        case paused(Transfer, pausedReaders: [PauseWaiter])
        /// The whole body is in and the outcome is being put in place (a download's file moved):
        /// too late to cancel, and past the deadline's reach.
        case delivering(Waiters)
        /// Cancelled or out of time: the run unwinds; an exchange that registers now is stopped.
        case stopping(Waiters, StopReason)
        /// The outcome is decided; completion hooks run before the waiters get it.
        case finishing(Waiters)
        // Boxed: the outcome is large, and a state that holds it inline is copied whole (an
        // outlined copy through the enum's value witness) each time a query such as `isStopping`
        // matches a case, several times per request; boxed, matching another case copies nothing.
        indirect case completed(Result<SessionResponse, CourierError>, resumeData: ResumeData?)
    }

    /// What stops a transfer in flight; performed outside the lock.
    struct Interruption {
        var cancelExchange: (@Sendable () -> Void)?
        var cancelWait: (@Sendable () -> Void)?
        /// Readers paused at their next chunk, woken so that they see the stop.
        var pausedReaders: [PauseWaiter] = []
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
        /// Stop the transfer; it completes when it has unwound.
        case interrupt(Interruption)
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

    private(set) var state: State = .notStarted(Waiters())

    /// The request going out now, once it differs from the original one (nil until then, so that
    /// a task whose request never changes copies nothing).
    private(set) var currentRequest: Request?
    /// The final response head, once it has arrived.
    private(set) var response: ResponseHead?
    var uploadProgress = ProgressTracker()
    var downloadProgress = ProgressTracker()

    /// True once the transfer must unwind: cancelled, or past its deadline.
    var isStopping: Bool {
        if case .stopping = state { return true }
        return false
    }

    /// What a reader does at its next step: go on, wait (paused) or unwind (stopping).
    enum ReaderGate {
        case proceed, wait, unwind
    }

    /// Whether the task is paused, and ``isStopping``, in one look, which readers take before every attempt and
    /// body chunk. Mutating only to look without a copy: matching `state` where it is stored
    /// copies its whole payload first (an outlined copy, several per request); moved out, it is
    /// matched in place and moved back.
    mutating func readerGate() -> ReaderGate {
        var taken = State.notStarted(Waiters())
        swap(&taken, &state)
        defer { swap(&taken, &state) }
        switch taken {
        case .paused: return .wait
        case .stopping: return .unwind
        case .notStarted, .running, .delivering, .finishing, .completed: return .proceed
        }
    }

    /// A download that stops now keeps its partial file: it was cancelled asking for resume data.
    var keepsPartialFile: Bool {
        if case .stopping(_, .cancelled(keepingPartialFile: true)) = state { return true }
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
        case .notStarted(let waiters):
            state = .running(Transfer(waiters: waiters))
            return .run
        case .paused(let transfer, let readers):
            state = .running(transfer)
            return .wake(readers)
        case .running, .delivering, .stopping, .finishing, .completed:
            return .none
        }
    }

    /// Pauses a running task; true when it was running.
    mutating func suspend() -> Bool {
        guard case .running(let transfer) = state else { return false }
        state = .paused(transfer, pausedReaders: [])
        return true
    }

    mutating func cancel(keepingPartialFile: Bool) -> CancelAction {
        let reason = StopReason.cancelled(keepingPartialFile: keepingPartialFile)
        if let interruption = stop(reason) { return .interrupt(interruption) }
        switch state {
        case .notStarted(let waiters):
            state = .finishing(waiters)
            return .completeWithoutTransfer
        case .stopping(let waiters, .deadlinePassed):
            // A cancel wins over the deadline; what stops the transfer was handed out already.
            state = .stopping(waiters, reason)
            return .interrupt(Interruption())
        case .running, .paused, .delivering, .stopping, .finishing, .completed:
            return .none
        }
    }

    /// The deadline passed: what to interrupt, or nil when the task is not started, delivering,
    /// stopping or over.
    mutating func deadlinePassed() -> Interruption? {
        stop(.deadlinePassed)
    }

    /// Stops a running or paused transfer for `reason`: what to interrupt, or nil in any other state.
    private mutating func stop(_ reason: StopReason) -> Interruption? {
        let (transfer, readers): (Transfer, [PauseWaiter])
        switch state {
        case .running(let running): (transfer, readers) = (running, [])
        case .paused(let paused, let pausedReaders): (transfer, readers) = (paused, pausedReaders)
        case .notStarted, .delivering, .stopping, .finishing, .completed: return nil
        }
        state = .stopping(transfer.waiters, reason)
        return Interruption(
            cancelExchange: transfer.cancelExchange, cancelWait: transfer.cancelWait, pausedReaders: readers)
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
        case .running(var transfer):
            change(&transfer)
            state = .running(transfer)
        case .paused(var transfer, let readers):
            change(&transfer)
            state = .paused(transfer, pausedReaders: readers)
        case .stopping:
            return true
        case .notStarted, .delivering, .finishing, .completed:
            break
        }
        return false
    }

    /// A reader asks to wait until resumed: false when it must not wait (not paused); the
    /// caller then resumes `reader` itself.
    mutating func waitWhilePaused(_ reader: PauseWaiter) -> Bool {
        guard case .paused(let transfer, var readers) = state else { return false }
        readers.append(reader)
        state = .paused(transfer, pausedReaders: readers)
        return true
    }

    // MARK: Progress the handle shows

    mutating func send(_ request: Request) { currentRequest = request }

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
        case .running(let transfer), .paused(let transfer, _):
            state = .delivering(transfer.waiters)
            return true
        case .delivering:
            return true
        case .notStarted, .stopping, .finishing, .completed:
            return false
        }
    }

    /// The transfer's outcome: what to deliver in its place. The caller builds the replacement
    /// error, runs its completion hooks, then ``publish(_:resumeData:)``es what it delivers.
    mutating func complete(_ outcome: Result<SessionResponse, CourierError>) -> CompletionAction {
        let waiters: Waiters
        let action: CompletionAction
        switch state {
        case .finishing, .completed:
            return .ignore
        case .notStarted(let left), .delivering(let left):
            (waiters, action) = (left, .deliver)
        case .running(let transfer), .paused(let transfer, _):
            (waiters, action) = (transfer.waiters, .deliver)
        case .stopping(let left, .cancelled):
            let isCancelled = if case .failure(let error) = outcome { error.code == .cancelled } else { false }
            (waiters, action) = (left, isCancelled ? .deliver : .deliverCancelled)
        case .stopping(let left, .deadlinePassed):
            (waiters, action) = (left, .deliverTimedOut)
        }
        state = .finishing(waiters)
        return action
    }

    /// Keeps the delivered outcome, and hands back every waiter to resume with it.
    mutating func publish(_ outcome: Result<SessionResponse, CourierError>, resumeData: ResumeData?) -> Waiters {
        guard case .finishing(let waiters) = state else { return Waiters() }
        state = .completed(outcome, resumeData: resumeData)
        return waiters
    }

    /// The outcome when there is one; otherwise keeps `waiter` to resume when it comes.
    mutating func waitForOutcome(_ waiter: Waiter) -> Result<SessionResponse, CourierError>? {
        switch state {
        case .completed(let result, _):
            return result
        case .notStarted(var waiters):
            waiters.add(waiter)
            state = .notStarted(waiters)
        case .running, .paused:
            _ = updateTransfer { $0.waiters.add(waiter) }
        case .delivering(var waiters):
            waiters.add(waiter)
            state = .delivering(waiters)
        case .stopping(var waiters, let reason):
            waiters.add(waiter)
            state = .stopping(waiters, reason)
        case .finishing(var waiters):
            waiters.add(waiter)
            state = .finishing(waiters)
        }
        return nil
    }
}

extension TaskStateMachine: Sendable where Waiter: Sendable, PauseWaiter: Sendable {}
extension TaskStateMachine.State: Sendable where Waiter: Sendable, PauseWaiter: Sendable {}
extension TaskStateMachine.Waiters: Sendable where Waiter: Sendable {}
extension TaskStateMachine.Transfer: Sendable where Waiter: Sendable {}

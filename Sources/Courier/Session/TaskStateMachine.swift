/// The life of a task, as a state machine that returns what to do and does no I/O itself.
///
/// States follow URLSessionTask: suspended (before the first resume, or paused), running,
/// canceling (cancel requested, the transfer still unwinding) and completed. The driver asks
/// the machine on every event and performs the action it returns; the machine decides that a
/// completion is delivered exactly once, and that a cancelled task reports `.cancelled` even
/// when its transfer raced to another outcome.
struct TaskStateMachine: Sendable {
    enum State: Sendable, Equatable {
        case suspended(hasStarted: Bool)
        case running
        /// The whole body is in and the outcome is being put in place (a download's file moved):
        /// too late to cancel, so a cancel now does nothing.
        case committing
        case canceling
        case completed
    }

    enum ResumeAction: Sendable, Equatable {
        /// First resume: start the transfer.
        case start
        /// Resume after a suspend: let the paused transfer read again.
        case openGate
        case none
    }

    enum SuspendAction: Sendable, Equatable {
        /// Pause the running transfer at its next chunk.
        case closeGate
        case none
    }

    enum CancelAction: Sendable, Equatable {
        /// Never started: complete now with `.cancelled`.
        case completeWithoutTransfer
        /// Stop the transfer; it completes when it has unwound (and wakes a paused reader).
        case cancelTransfer
        case none
    }

    enum CompletionAction: Sendable, Equatable {
        /// Deliver the outcome as it is.
        case deliver
        /// Deliver `.cancelled` instead: a cancel was requested before the outcome arrived.
        case deliverCancelled
        /// Already completed; drop this outcome.
        case ignore
    }

    private(set) var state: State = .suspended(hasStarted: false)
    /// The task's deadline passed before it committed; it unwinds and reports `.timedOut`.
    private(set) var hasExpired = false

    /// True while a reader should wait (suspended after starting).
    var isPaused: Bool { state == .suspended(hasStarted: true) }

    mutating func resume() -> ResumeAction {
        switch state {
        case .suspended(let hasStarted):
            state = .running
            return hasStarted ? .openGate : .start
        case .running, .committing, .canceling, .completed:
            return .none
        }
    }

    mutating func suspend() -> SuspendAction {
        switch state {
        case .running:
            state = .suspended(hasStarted: true)
            return .closeGate
        case .suspended, .committing, .canceling, .completed:
            return .none
        }
    }

    mutating func cancel() -> CancelAction {
        switch state {
        case .suspended(hasStarted: false):
            state = .completed
            return .completeWithoutTransfer
        case .suspended(hasStarted: true), .running:
            state = .canceling
            return .cancelTransfer
        case .committing, .canceling, .completed:
            return .none
        }
    }

    /// The transfer has received everything: true to go on and deliver the outcome (a cancel
    /// arriving from now on is too late), false when a cancel came first and it must unwind.
    mutating func beginCommit() -> Bool {
        if hasExpired { return false }
        switch state {
        case .running, .suspended(hasStarted: true):
            state = .committing
            return true
        case .committing:
            return true
        case .suspended(hasStarted: false), .canceling, .completed:
            return false
        }
    }

    /// The deadline passed: true when the transfer must be stopped, false when it is already
    /// committing (its outcome stands) or over.
    mutating func expire() -> Bool {
        switch state {
        case .running, .suspended(hasStarted: true):
            hasExpired = true
            return true
        case .suspended(hasStarted: false), .committing, .canceling, .completed:
            return false
        }
    }

    mutating func complete(outcomeIsCancellation: Bool) -> CompletionAction {
        switch state {
        case .completed:
            return .ignore
        case .canceling:
            state = .completed
            return outcomeIsCancellation ? .deliver : .deliverCancelled
        case .running, .committing, .suspended:
            state = .completed
            return .deliver
        }
    }
}

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

    /// True while a reader should wait (suspended after starting).
    var isPaused: Bool { state == .suspended(hasStarted: true) }

    mutating func resume() -> ResumeAction {
        switch state {
        case .suspended(let hasStarted):
            state = .running
            return hasStarted ? .openGate : .start
        case .running, .canceling, .completed:
            return .none
        }
    }

    mutating func suspend() -> SuspendAction {
        switch state {
        case .running:
            state = .suspended(hasStarted: true)
            return .closeGate
        case .suspended, .canceling, .completed:
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
        case .canceling, .completed:
            return .none
        }
    }

    mutating func complete(outcomeIsCancellation: Bool) -> CompletionAction {
        switch state {
        case .completed:
            return .ignore
        case .canceling:
            state = .completed
            return outcomeIsCancellation ? .deliver : .deliverCancelled
        case .running, .suspended:
            state = .completed
            return .deliver
        }
    }
}

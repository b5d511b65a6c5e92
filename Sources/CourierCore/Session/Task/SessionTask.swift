import Foundation
import NIOConcurrencyHelpers

/// A handle on one transfer, as URLSessionTask: an identifier, a state, progress, and control.
///
/// Tasks start suspended; ``resume()`` starts them. ``suspend()`` pauses a running transfer
/// before its next body chunk (the server is then held back by TCP flow control), ``cancel()``
/// stops it, and ``response()`` waits for the outcome. All members are safe to call from any task.
public final class SessionTask: Sendable, CustomStringConvertible, ExchangeCancellationTarget {
    /// What the task does with the response body.
    public enum Kind: Sendable, Hashable {
        /// Body kept in memory (capped).
        case data
        /// A request body is sent; the response body is kept in memory.
        case upload
        /// Body streamed to a file, then moved to its destination.
        case download
    }

    /// Where a task is in its life.
    public enum State: Sendable, Hashable {
        /// Not started yet, or paused.
        case suspended
        /// Transferring.
        case running
        /// A cancel was requested and the transfer is unwinding.
        case canceling
        /// Finished, with a response or an error.
        case completed
    }

    /// Unique within its session manager, increasing in creation order.
    public let identifier: Int
    /// The task's kind.
    public let kind: Kind
    /// The request as given, before redirects and adapters.
    public let originalRequest: Request

    let manager: SessionManager
    let uploadProgressHandler: ProgressHandler?
    let downloadProgressHandler: ProgressHandler?
    let download: DownloadParameters?
    /// Set for `SessionManager.stream(_:)`: the final response's body goes here, unread; dropped
    /// unread (the caller gave up first), the body cancels its exchange.
    let streamHandoff: NIOLockedValueBox<BodyChunks?>?
    /// The redirect policy and retrier this task uses instead of, or before, its manager's.
    let overrides: TaskOverrides

    typealias ResultWaiter = UnsafeContinuation<Result<SessionResponse, CourierError>, Never>
    typealias PauseWaiter = CheckedContinuation<Void, Never>
    typealias Machine = TaskStateMachine<ResultWaiter, PauseWaiter>

    /// Everything about the task that more than one thread touches; see ``TaskStateMachine``.
    let machine: NIOLockedValueBox<Machine>

    init(
        identifier: Int, kind: Kind, request: Request, manager: SessionManager,
        uploadProgress: ProgressHandler?, downloadProgress: ProgressHandler?, download: DownloadParameters?,
        streamHandoff: NIOLockedValueBox<BodyChunks?>? = nil, overrides: TaskOverrides = TaskOverrides()
    ) {
        self.identifier = identifier
        self.kind = kind
        self.originalRequest = request
        self.manager = manager
        self.uploadProgressHandler = uploadProgress
        self.downloadProgressHandler = downloadProgress
        self.download = download
        self.streamHandoff = streamHandoff
        self.overrides = overrides
        self.machine = NIOLockedValueBox(TaskStateMachine())
    }

    public var description: String {
        "SessionTask #\(identifier) (\(kind)) \(originalRequest.method) \(originalRequest.url.absoluteString)"
    }

    /// The task's state now.
    public var state: State {
        switch machine.withLockedValue({ $0.state }) {
        case .pending(.notStarted, _), .pending(.paused, _): return .suspended
        case .pending(.running, _), .pending(.delivering, _), .pending(.stopping(.deadlinePassed), _): return .running
        case .pending(.stopping(.cancelled), _): return .canceling
        case .pending(.finishing, _), .completed: return .completed
        }
    }

    /// The request being sent now (after redirects, adapters and resume headers).
    public var currentRequest: Request { machine.withLockedValue { $0.currentRequest } ?? originalRequest }
    /// The final response head, once it has arrived.
    public var response: ResponseHead? { machine.withLockedValue { $0.response } }
    /// Upload progress so far.
    public var uploadProgress: TransferProgress { machine.withLockedValue { $0.uploadProgress.current } }
    /// Download progress so far.
    public var downloadProgress: TransferProgress { machine.withLockedValue { $0.downloadProgress.current } }

    /// Starts the task on a Swift task of its own, or continues it after ``suspend()``. Does
    /// nothing once it is running, canceling or completed.
    public func resume() {
        let deadline = makeDeadline()
        switch machine.withLockedValue({ $0.start() }) {
        case .run:
            for monitor in manager.eventMonitors { monitor.taskDidResume(self) }
            // The same run as an awaited task's, on a task of its own: nothing cancels this one,
            // the state machine stops it.
            let hooks = manager.hooks
            Task { _ = await self.run(deadline: deadline, hooks: hooks) }
        case .wake(let readers):
            for monitor in manager.eventMonitors { monitor.taskDidResume(self) }
            // Outside the lock, so nothing a woken reader runs can re-enter it.
            for reader in readers { reader.resume() }
        case .none:
            break
        }
    }

    /// Pauses a running task before its next body chunk; ``resume()`` continues it.
    public func suspend() {
        guard machine.withLockedValue({ $0.suspend() }) else { return }
        for monitor in manager.eventMonitors { monitor.taskDidSuspend(self) }
    }

    /// Cancels the task; it completes with `.cancelled`, and a download leaves no file behind.
    public func cancel() {
        cancel(keepingPartialFile: false)
    }

    /// Cancels a download and returns what is needed to continue it later, or nil when the
    /// task is not a download, had no bytes yet, the server sent no ETag/Last-Modified, or it
    /// already completed. Waits until the transfer has unwound.
    @discardableResult
    public func cancel(producingResumeData: Bool) async -> ResumeData? {
        cancel(keepingPartialFile: producingResumeData && download != nil)
        _ = await outcome()
        return machine.withLockedValue { $0.resumeData }
    }

    /// Waits for the outcome; a task nobody started yet runs here, on the calling Swift task.
    /// Cancelling the waiting Swift task cancels this task.
    /// - Throws: the task's ``CourierError``.
    public func response() async throws -> SessionResponse {
        try await response(hooks: nil)
    }

    /// ``response()`` with the session's hooks when the caller read them already.
    func response(hooks: SessionHooks?) async throws -> SessionResponse {
        let deadline = makeDeadline()
        let starts = machine.withLockedValue { machine -> Bool in
            // Waiting never resumes a paused task.
            guard case .pending(.notStarted, _) = machine.state, case .run = machine.start() else { return false }
            return true
        }
        guard starts else {
            return try await withTaskCancellationHandler {
                try await outcome().get()
            } onCancel: {
                self.cancel()
            }
        }
        for monitor in manager.eventMonitors { monitor.taskDidResume(self) }
        // The run delivered the outcome before it returned; waiting for it would cost a continuation.
        if let delivered = await run(deadline: deadline, hooks: hooks ?? manager.hooks) { return try delivered.get() }
        return try await outcome().get()
    }

    func outcome() async -> Result<SessionResponse, CourierError> {
        // Unsafe rather than checked: every waiter is resumed exactly once, by `publish`, and
        // the checked form costs an allocation per request.
        await withUnsafeContinuation { (waiter: ResultWaiter) in
            if let ready = machine.withLockedValue({ $0.waitForOutcome(waiter) }) { waiter.resume(returning: ready) }
        }
    }

    private func cancel(keepingPartialFile: Bool) {
        switch machine.withLockedValue({ $0.cancel(keepingPartialFile: keepingPartialFile) }) {
        case .completeWithoutTransfer:
            publish(.failure(cancelledError()), resumeData: nil, didComplete: manager.taskDidComplete(self))
        case .interrupt(let transfer, let readers):
            stop(transfer, waking: readers)
        case .none:
            break
        }
    }

    /// Called by the deadline timer: stops the transfer unless it is already delivering its
    /// outcome. The transfer then unwinds and the task reports `.timedOut`.
    func deadlinePassed() {
        if let stopped = machine.withLockedValue({ $0.stop(.deadlinePassed) }) {
            stop(stopped.transfer, waking: stopped.pausedReaders)
        }
    }

    /// Outside the lock: an exchange's cancel action, a cancelled wait or a woken reader may call
    /// back into this task.
    private func stop(_ transfer: Machine.Transfer, waking readers: [PauseWaiter]) {
        transfer.cancelExchange?()
        transfer.cancelWait?()
        for reader in readers { reader.resume() }
    }

    /// Keeps the way to stop the exchange in flight; calls it at once when the task is already
    /// stopping. Reached through the ``ExchangeContext/cancellation`` the task hands its transport.
    func register(cancelExchange: @escaping @Sendable () -> Void) {
        if machine.withLockedValue({ $0.register(cancelExchange: cancelExchange) }) { cancelExchange() }
    }

    /// True once the task is cancelled or out of time, as its state machine alone says.
    var isStopping: Bool { machine.withLockedValue { $0.readerGate() == .unwind } }

    /// Runs `work` (an interceptor's or a hook's code, a retry delay: anything that is neither the
    /// exchange nor a paused reader) so that a stop of this task ends it: on a Swift task of its
    /// own, cancelled by the stop, never by cancelling the caller's Swift task.
    /// - Throws: `work`'s error; a stopped `work` usually throws `CancellationError`.
    func untilStopped<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let running = Task { try await work() }
        if machine.withLockedValue({ $0.register(cancelWait: { running.cancel() }) }) { running.cancel() }
        defer { _ = machine.withLockedValue { $0.register(cancelWait: nil) } }
        return try await running.value
    }

    /// The request's own deadline, else the transport's default; nil for none.
    private func makeDeadline() -> RequestDeadline? {
        RequestDeadline(seconds: originalRequest.timeoutInterval, orElse: manager.transportDeadlineSeconds)
    }

    /// Marks the body as fully received; from here a cancel or the deadline is too late. With
    /// `received`, the download progress moves to those bytes (of `total`) and is finished, in
    /// the same turn of the lock; the handler hears of each step that moved it, outside the lock.
    /// - Throws: `.cancelled` when a cancel or the deadline came first.
    func beginDelivering(finishingDownloadAt received: Int64? = nil, of total: Int64? = nil) throws {
        let (delivering, advanced, finished) = machine.withLockedValue {
            machine -> (Bool, TransferProgress?, TransferProgress?) in
            guard machine.beginDelivering() else { return (false, nil, nil) }
            guard let received else { return (true, nil, nil) }
            // No bytes, no step before the closing one (an empty body reports only that).
            let advanced = received > 0 ? machine.downloadProgress.advance(completed: received, total: total) : nil
            return (true, advanced, machine.downloadProgress.finish())
        }
        guard delivering else { throw cancelledError() }
        if let advanced { downloadProgressHandler?(advanced) }
        if let finished { downloadProgressHandler?(finished) }
    }

    /// The error a stopping run unwinds with; the state machine decides what is delivered.
    func cancelledError() -> CourierError {
        CourierError(
            .cancelled, "the request to \(originalRequest.url.absoluteString) was cancelled",
            offendingInput: originalRequest.url.absoluteString)
    }

    /// Delivers the transfer's outcome, or `.cancelled` / `.timedOut` in its place when a cancel
    /// or the deadline came first, and returns what it delivered; a second outcome is dropped
    /// (nil). `stage` says where the transfer stood, for a deadline's message.
    ///
    /// The task leaves the manager's list first, as its did-complete hook is read. With no hook
    /// and no event monitor to run between them, the outcome is kept and published in the one
    /// turn of the lock that decides it; otherwise they run in between (see ``publish(_:resumeData:didComplete:)``).
    @discardableResult
    func finish(_ result: Result<SessionResponse, CourierError>, stage: String? = nil, resumeData: ResumeData? = nil)
        -> Result<SessionResponse, CourierError>?
    {
        let didComplete = manager.taskDidComplete(self)
        let publishesAtOnce = didComplete == nil && manager.eventMonitors.isEmpty
        let (action, published) = machine.withLockedValue { machine -> (Machine.CompletionAction, Machine.Waiters?) in
            let action = machine.complete(result)
            guard publishesAtOnce, case .deliver = action else { return (action, nil) }
            return (action, machine.publish(result, resumeData: resumeData))
        }
        if let published {
            Self.resume(published, with: result)
            return result
        }
        let outcome: Result<SessionResponse, CourierError>
        switch action {
        case .ignore: return nil
        case .deliver: outcome = result
        case .deliverCancelled: outcome = .failure(cancelledError())
        case .deliverTimedOut:
            // The interval the deadline came from, as the task's start worked it out.
            let seconds = makeDeadline()?.seconds ?? 0
            let target = originalRequest.url.absoluteString
            outcome = .failure(
                CourierError(
                    .timedOut,
                    "the request to \(target) did not complete within its \(seconds) s deadline"
                        + (stage.map { ": it ran out \($0)" } ?? ""),
                    offendingInput: target))
        }
        publish(outcome, resumeData: resumeData, didComplete: didComplete)
        return outcome
    }

    private func publish(
        _ outcome: Result<SessionResponse, CourierError>, resumeData: ResumeData?,
        didComplete: (@Sendable (SessionTask, Result<SessionResponse, CourierError>) -> Void)?
    ) {
        // didComplete and the event monitors run before the outcome is published, so a caller
        // whose response() returned finds them done and the task gone from `tasks`. (Publishing
        // first let a waiter race ahead of them: seen under AddressSanitizer.)
        didComplete?(self, outcome)
        for monitor in manager.eventMonitors { monitor.task(self, didCompleteWith: outcome) }
        Self.resume(machine.withLockedValue { $0.publish(outcome, resumeData: resumeData) }, with: outcome)
    }

    private static func resume(_ waiters: Machine.Waiters, with outcome: Result<SessionResponse, CourierError>) {
        waiters.first?.resume(returning: outcome)
        for waiter in waiters.more { waiter.resume(returning: outcome) }
    }

    /// Moves one of the trackers under the lock, and calls the handler outside it when the
    /// progress moved forward.
    func report(
        _ tracker: WritableKeyPath<Machine, ProgressTracker>, to handler: ProgressHandler?,
        _ step: (inout ProgressTracker) -> TransferProgress?
    ) {
        if let progress = machine.withLockedValue({ step(&$0[keyPath: tracker]) }) { handler?(progress) }
    }
}

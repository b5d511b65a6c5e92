import Foundation
import NIOConcurrencyHelpers

/// A handle on one transfer, as URLSessionTask: an identifier, a state, progress, and control.
///
/// Tasks start suspended; ``resume()`` starts them. ``suspend()`` pauses a running transfer
/// before its next body chunk (the server is then held back by TCP flow control), ``cancel()``
/// stops it, and ``response()`` waits for the outcome. All members are safe to call from any task.
public final class SessionTask: Sendable, CustomStringConvertible, ExchangeCancellationScope {
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

    struct DownloadParameters: Sendable {
        var options: DownloadOptions
        var destination: DownloadDestination
        var resumeData: ResumeData?
    }

    struct Inner {
        var machine = TaskStateMachine()
        var currentRequest: Request
        var response: ResponseHead?
        var uploadProgress = ProgressTracker()
        var downloadProgress = ProgressTracker()
        var result: Result<SessionResponse, CourierError>?
        /// Callers waiting for the outcome: nearly always exactly one, kept out of an array so
        /// that one waiter costs no allocation.
        var resultWaiter: ResultWaiter?
        var moreResultWaiters: [ResultWaiter] = []
        var gateWaiters: [CheckedContinuation<Void, Never>] = []
        var work: Task<Void, Never>?
        /// The transfer runs on the caller's Swift task (``runOnCallersTask()``): it is stopped
        /// through `cancelExchange`, never by cancelling that task.
        var runsOnCallersTask = false
        var exchangeCancelled = false
        var cancelExchange: (@Sendable () -> Void)?
        var wantsResumeData = false
        var resumeData: ResumeData?
    }

    typealias ResultWaiter = UnsafeContinuation<Result<SessionResponse, CourierError>, Never>

    let inner: NIOLockedValueBox<Inner>

    init(
        identifier: Int, kind: Kind, request: Request, manager: SessionManager,
        uploadProgress: ProgressHandler?, downloadProgress: ProgressHandler?, download: DownloadParameters?
    ) {
        self.identifier = identifier
        self.kind = kind
        self.originalRequest = request
        self.manager = manager
        self.uploadProgressHandler = uploadProgress
        self.downloadProgressHandler = downloadProgress
        self.download = download
        self.inner = NIOLockedValueBox(Inner(currentRequest: request))
    }

    public var description: String { "SessionTask #\(identifier) (\(kind)) \(originalRequest.method) \(originalRequest.url.absoluteString)" }

    /// The task's state now.
    public var state: State {
        switch inner.withLockedValue({ $0.machine.state }) {
        case .suspended: return .suspended
        case .running, .committing: return .running
        case .canceling: return .canceling
        case .completed: return .completed
        }
    }

    /// The request being sent now (after redirects, adapters and resume headers).
    public var currentRequest: Request { inner.withLockedValue { $0.currentRequest } }
    /// The final response head, once it has arrived.
    public var response: ResponseHead? { inner.withLockedValue { $0.response } }
    /// Upload progress so far.
    public var uploadProgress: TransferProgress { inner.withLockedValue { $0.uploadProgress.current } }
    /// Download progress so far.
    public var downloadProgress: TransferProgress { inner.withLockedValue { $0.downloadProgress.current } }

    /// Starts the task, or continues it after ``suspend()``. Does nothing once it is canceling or completed.
    public func resume() {
        let (action, gates) = inner.withLockedValue { inner -> (TaskStateMachine.ResumeAction, [CheckedContinuation<Void, Never>]) in
            let action = inner.machine.resume()
            switch action {
            case .start:
                inner.work = Task { await self.run() }
            case .openGate:
                let waiters = inner.gateWaiters
                inner.gateWaiters = []
                return (action, waiters)
            case .none:
                break
            }
            return (action, [])
        }
        // Continuations are resumed outside the lock, so nothing they run can re-enter it.
        for gate in gates { gate.resume() }
        if action != .none { for monitor in manager.eventMonitors { monitor.taskDidResume(self) } }
    }

    /// Pauses a running task before its next body chunk; ``resume()`` continues it.
    public func suspend() {
        let action = inner.withLockedValue { $0.machine.suspend() }
        if action == .closeGate { for monitor in manager.eventMonitors { monitor.taskDidSuspend(self) } }
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
        return inner.withLockedValue { $0.resumeData }
    }

    /// Waits for the outcome; cancelling the waiting Swift task cancels this task.
    /// - Throws: the task's ``CourierError``.
    public func response() async throws -> SessionResponse {
        try await withTaskCancellationHandler {
            try await outcome().get()
        } onCancel: {
            self.cancel()
        }
    }

    func outcome() async -> Result<SessionResponse, CourierError> {
        // Unsafe rather than checked: every waiter is resumed exactly once, by `deliver`, and
        // the checked form costs an allocation per request.
        await withUnsafeContinuation { (continuation: ResultWaiter) in
            let ready = inner.withLockedValue { inner -> Result<SessionResponse, CourierError>? in
                if let result = inner.result { return result }
                if inner.resultWaiter == nil {
                    inner.resultWaiter = continuation
                } else {
                    inner.moreResultWaiters.append(continuation)
                }
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func cancel(keepingPartialFile: Bool) {
        let (action, stop, gates) = inner.withLockedValue {
            inner -> (TaskStateMachine.CancelAction, TransferStop, [CheckedContinuation<Void, Never>]) in
            let action = inner.machine.cancel()
            guard action == .cancelTransfer else { return (action, TransferStop(), []) }
            inner.wantsResumeData = keepingPartialFile
            let waiters = inner.gateWaiters
            inner.gateWaiters = []
            return (action, inner.takeTransferStop(), waiters)
        }
        // Cancelling a Swift task runs its cancellation handlers synchronously (AsyncHTTPClient's
        // among them), and a paused reader wakes as soon as its gate opens: both happen outside
        // the lock, so a handler or a progress callback that calls back into this task cannot deadlock.
        stop.perform()
        for gate in gates { gate.resume() }
        if action == .completeWithoutTransfer {
            deliver(.failure(cancelledError()), checkedAgainstMachine: false)
        }
    }

    /// Called by the deadline timer: stops the transfer unless it already committed its outcome,
    /// by cancelling the task's Swift task (which wakes every wait of the transfer), or the exchange
    /// in flight when the transfer runs on the caller's task, and by opening a paused reader's
    /// gate. The transfer then unwinds and `run()` reports `.timedOut`.
    func deadlinePassed() {
        let expired = inner.withLockedValue { inner -> (TransferStop, [CheckedContinuation<Void, Never>])? in
            guard inner.machine.expire() else { return nil }
            let waiters = inner.gateWaiters
            inner.gateWaiters = []
            return (inner.takeTransferStop(), waiters)
        }
        guard let (stop, gates) = expired else { return }
        // Outside the lock: cancellation handlers run synchronously and may call back into this task.
        stop.perform()
        for gate in gates { gate.resume() }
    }

    /// How to stop the transfer now: cancel its own Swift task, or, when it runs on the caller's
    /// task, the exchange in flight (and any exchange it starts later).
    struct TransferStop {
        var work: Task<Void, Never>?
        var cancelExchange: (@Sendable () -> Void)?

        func perform() {
            work?.cancel()
            cancelExchange?()
        }
    }

    func register(cancelExchange: @escaping @Sendable () -> Void) {
        let cancelled = inner.withLockedValue { inner -> Bool in
            if inner.exchangeCancelled { return true }
            inner.cancelExchange = cancelExchange
            return false
        }
        if cancelled { cancelExchange() }
    }

    /// Runs the transfer on the calling Swift task rather than on a task of its own, and returns
    /// its outcome; only for a task nobody has resumed yet, whose every exchange registers with
    /// ``ExchangeCancellationScope`` (see `SessionManager.runsOnCallersTask`). Cancelling the
    /// caller cancels this task, as ``response()`` does.
    /// - Throws: the task's ``CourierError``.
    func runOnCallersTask() async throws -> SessionResponse {
        let started = inner.withLockedValue { inner -> Bool in
            guard inner.machine.resume() == .start else { return false }
            inner.runsOnCallersTask = true
            return true
        }
        guard started else { return try await response() }
        for monitor in manager.eventMonitors { monitor.taskDidResume(self) }
        await withTaskCancellationHandler {
            await run()
        } onCancel: {
            self.cancel()
        }
        return try await outcome().get()
    }

    /// Marks the body as fully received; from here a cancel or the deadline is too late.
    /// - Throws: `.cancelled` when a cancel or the deadline came first.
    func commit() throws {
        let committed = !Task.isCancelled && inner.withLockedValue { $0.machine.beginCommit() }
        if !committed { throw cancelledError() }
    }

    func cancelledError() -> CourierError {
        CourierError(
            .cancelled, "the request to \(originalRequest.url.absoluteString) was cancelled",
            offendingInput: originalRequest.url.absoluteString)
    }

    /// Waits while the task is paused; throws `.cancelled` once it is cancelled.
    func waitWhileSuspended() async throws {
        if inner.withLockedValue({ $0.machine.isPaused }) {
            // Cancelling the waiting Swift task (the deadline does) opens the gate too.
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let waits = inner.withLockedValue { inner -> Bool in
                        guard inner.machine.isPaused, !Task.isCancelled else { return false }
                        inner.gateWaiters.append(continuation)
                        return true
                    }
                    if !waits { continuation.resume() }
                }
            } onCancel: {
                let gates = inner.withLockedValue { inner -> [CheckedContinuation<Void, Never>] in
                    let waiters = inner.gateWaiters
                    inner.gateWaiters = []
                    return waiters
                }
                for gate in gates { gate.resume() }
            }
        }
        if Task.isCancelled || inner.withLockedValue({ $0.machine.state == .canceling || $0.machine.hasExpired }) {
            throw cancelledError()
        }
    }

    func finish(_ result: Result<SessionResponse, CourierError>) {
        deliver(result, checkedAgainstMachine: true)
    }

    private func deliver(_ result: Result<SessionResponse, CourierError>, checkedAgainstMachine: Bool) {
        let delivered = inner.withLockedValue { inner -> Result<SessionResponse, CourierError>? in
            var outcome = result
            if checkedAgainstMachine {
                var isCancellation = false
                if case .failure(let error) = result, error.code == .cancelled { isCancellation = true }
                switch inner.machine.complete(outcomeIsCancellation: isCancellation) {
                case .ignore: return nil
                case .deliver: break
                case .deliverCancelled: outcome = .failure(cancelledError())
                }
            }
            inner.work = nil
            return outcome
        }
        guard let outcome = delivered else { return }
        // didComplete, the event monitors and the manager's bookkeeping run before the outcome is
        // published, so a caller whose response() returned finds them done and the task gone from
        // `tasks`. (Publishing first let a waiter race ahead of them: seen under AddressSanitizer.)
        manager.hooks.didComplete?(self, outcome)
        for monitor in manager.eventMonitors { monitor.task(self, didCompleteWith: outcome) }
        manager.taskDidComplete(self)
        let (first, more) = inner.withLockedValue { inner in
            inner.result = outcome
            defer {
                inner.resultWaiter = nil
                inner.moreResultWaiters = []
            }
            return (inner.resultWaiter, inner.moreResultWaiters)
        }
        first?.resume(returning: outcome)
        for waiter in more { waiter.resume(returning: outcome) }
    }

    func reportUpload(completed: Int64, total: Int64?) {
        let report = inner.withLockedValue { $0.uploadProgress.advance(completed: completed, total: total) }
        if let report { uploadProgressHandler?(report) }
    }

    func finishUpload() {
        let report = inner.withLockedValue { $0.uploadProgress.finish() }
        if let report { uploadProgressHandler?(report) }
    }

    func reportDownload(completed: Int64, total: Int64?) {
        let report = inner.withLockedValue { $0.downloadProgress.advance(completed: completed, total: total) }
        if let report { downloadProgressHandler?(report) }
    }

    func finishDownload() {
        let report = inner.withLockedValue { $0.downloadProgress.finish() }
        if let report { downloadProgressHandler?(report) }
    }
}

extension SessionTask.Inner {
    /// Takes what stops the transfer; from here an exchange that registers is cancelled at once.
    mutating func takeTransferStop() -> SessionTask.TransferStop {
        guard runsOnCallersTask else { return SessionTask.TransferStop(work: work) }
        exchangeCancelled = true
        defer { cancelExchange = nil }
        return SessionTask.TransferStop(cancelExchange: cancelExchange)
    }
}

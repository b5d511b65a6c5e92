import Foundation
import NIOCore
import NIOPosix

/// The run of a task: a loop that does the I/O of each attempt (adapt, send, follow, retry,
/// read) and asks ``AttemptPolicy`` what comes next. The task's shared state is in its
/// ``TaskStateMachine``; the loop's own is an ``AttemptHistory`` that no other thread sees.
extension SessionTask {
    /// Runs the transfer to its outcome and delivers it; nil when the outcome was already
    /// delivered (it cannot be, but a second outcome is dropped).
    ///
    /// Every task runs here: on the caller's Swift task for an awaited one (``response()``), on a
    /// task of its own for ``resume()``. The state machine alone says whether to stop:
    /// cancelling the calling Swift task cancels the task through it, and a stop reaches the
    /// exchange through its ``ExchangeCancellation``, a paused reader through its wake-up, and an
    /// interceptor, a hook or a retry delay through ``untilStopped(_:)``.
    ///
    /// The deadline is the task's only clock: one timer on an event loop (none when there is no
    /// deadline), which stops the transfer through the state machine unless the outcome is
    /// already being delivered; the transfer then unwinds and the machine reports `.timedOut`.
    /// A timer rather than a racing child task: arming and cancelling it costs no task and no
    /// thread hop.
    ///
    /// `hooks` are the session's hooks as the task starts, read once: the attempts, the
    /// response and the body all use these.
    func run(deadline: RequestDeadline?, hooks: SessionHooks) async -> Result<SessionResponse, CourierError>? {
        let timer = deadline.flatMap { deadline -> Scheduled<Void>? in
            // Already past (a zero or negative interval): stopped here, before anything is sent,
            // not when an event loop gets to the timer, which a fast transport can outrun.
            guard deadline.instant > .now() else {
                deadlinePassed()
                return nil
            }
            return MultiThreadedEventLoopGroup.singleton.next().scheduleTask(deadline: deadline.instant) {
                self.deadlinePassed()
            }
        }
        var observer = TaskObserver(instruments: manager.instruments, taskIdentifier: identifier)
        var history = AttemptHistory(request: originalRequest)
        let result: Result<SessionResponse, CourierError>
        do {
            result = .success(
                try await withTaskCancellationHandler {
                    try await perform(deadline: deadline, hooks: hooks, history: &history, observer: &observer)
                } onCancel: {
                    self.cancel()
                })
        } catch {
            result = .failure(courierError(error, url: currentRequest.url))
        }
        timer?.cancel()
        observer.finish(result)
        guard case .failure(var error) = result else { return finish(result) }
        // Only failures pay for the copy; a response carries its metrics already.
        error.metrics = observer.metrics()
        return finish(.failure(error), stage: observer.stage, resumeData: history.resumeData)
    }

    /// An error as the task reports it: a ``CourierError`` as it is (transports, interceptors
    /// and hooks word their own), anything else as `.transportFailed` around it. Whether the
    /// task was cancelled or ran out of time is the state machine's to say, not this.
    func courierError(_ error: any Error, url: URL) -> CourierError {
        if error is CancellationError { return cancelledError() }
        let target = url.absoluteString
        return .wrapping(
            error, as: .transportFailed, "the request to \(target) failed: \(error)", offendingInput: target)
    }

    @inline(__always)  // One caller; a frame less per task.
    private func perform(
        deadline: RequestDeadline?, hooks: SessionHooks, history state: inout AttemptHistory,
        observer: inout TaskObserver
    ) async throws -> SessionResponse {
        while true {
            try await waitWhileSuspended()
            if state.needsAdapting, let adapter = manager.interceptor { try await adapt(&state, with: adapter) }
            var outgoing = try prepareAttempt(&state)
            let recorder = observer.beginAttempt(&outgoing)
            let reportsUpload = !outgoing.body.isEmpty && (uploadProgressHandler != nil || kind == .upload)
            let sent: TransportResponse
            do {
                sent = try await send(
                    outgoing, reportsUpload: reportsUpload, deadline: deadline, recorder: recorder,
                    readsBodyIncrementally: readsBodyIncrementally(hooks))
            } catch {
                try await recover(from: error, sent: outgoing, hooks: hooks, history: &state, observer: &observer)
                continue
            }
            if try await followsUp(sent, sent: outgoing, hooks: hooks, history: &state, observer: &observer) {
                continue
            }
            if reportsUpload { report(\.uploadProgress, to: uploadProgressHandler) { $0.finish() } }
            return try await deliver(
                sent, request: outgoing, hooks: hooks, resumeData: &state.resumeData, observer: &observer)
        }
    }

    /// After a failed attempt: returns when the request goes out again (a resend or a retry),
    /// and throws the failure otherwise. Not inlined, like the other branches below: a waiting
    /// task's frame holds only what every attempt needs (see ``deliver(_:request:hooks:resumeData:observer:)``).
    @inline(never)
    private func recover(
        from error: any Error, sent outgoing: Request, hooks: SessionHooks, history state: inout AttemptHistory,
        observer: inout TaskObserver
    ) async throws {
        let failure = courierError(error, url: outgoing.url)
        observer.attemptFailed(failure)
        if !isStopping, let pause = AttemptPolicy.resendPause(after: failure, sent: outgoing, history: &state) {
            // A stop ends the pause; the next turn of the loop then unwinds.
            if pause > .zero { try? await untilStopped { try await Task.sleep(for: pause) } }
        } else {
            guard case .consultRetrier = AttemptPolicy.afterFailure(failure, sent: outgoing, settings: settings(hooks)),
                try await retryAfterAsking(outgoing, response: nil, error: failure, state: &state)
            else { throw failure }
        }
        observer.nextReason = .retry
    }

    /// After a response head: true when the task follows a redirect or retries (the body is
    /// drained), false when this response is the one to deliver.
    /// - Throws: the failure the policy decides on (an unacceptable redirect, a hook's error).
    @inline(never)
    private func followsUp(
        _ response: TransportResponse, sent outgoing: Request, hooks: SessionHooks, history state: inout AttemptHistory,
        observer: inout TaskObserver
    ) async throws -> Bool {
        let head = response.head
        observer.attemptAnswered(head)
        let settings = settings(hooks)
        var step = AttemptPolicy.afterResponse(head, sent: outgoing, history: state, settings: settings)
        var reason = AttemptMetrics.Reason.redirect
        if case .redirect(let proposed) = step {
            if let next = try await agreedRedirect(proposed, response: head, hooks: hooks) {
                state.redirected(to: next)
            } else {
                step = AttemptPolicy.afterDeclinedRedirect(head, sent: outgoing, settings: settings)
            }
        }
        switch step {
        case .redirect:
            break
        case .consultRetrier:
            guard try await retryAfterAsking(outgoing, response: head, error: nil, state: &state) else { return false }
            reason = .retry
        case .fail(let error):
            throw error
        case .deliver:
            return false
        }
        await Self.drain(response.body)
        observer.attemptBodyEnded(decodedBytes: nil, head: head)
        observer.nextReason = reason
        return true
    }

    private func settings(_ hooks: SessionHooks) -> FollowUpSettings {
        FollowUpSettings(
            redirectPolicy: overrides.redirectPolicy ?? manager.configuration.redirectPolicy,
            hasRetrier: overrides.retrier != nil || manager.interceptor != nil,
            canProvideNewBody: hooks.needNewBodyStream != nil)
    }

    /// Hands the attempt's request to the interceptor's adapter.
    /// - Throws: the adapter's ``CourierError`` as it is, any other error as `.requestAdaptationFailed`.
    @inline(never)  // Its frame only while it runs, not in every waiting task's (see deliver).
    private func adapt(_ state: inout AttemptHistory, with adapter: any RequestInterceptor) async throws {
        let request = state.request
        do {
            state.adapted(to: try await untilStopped { try await adapter.adapt(request) })
        } catch {
            throw CourierError.wrapping(
                error, as: .requestAdaptationFailed, "adapting the request to \(request.url.absoluteString) failed",
                offendingInput: request.url.absoluteString)
        }
    }

    /// Adds resume headers to the (adapted) request: the request that goes out. Not async, so
    /// an attempt without an adapter pays for no extra async call.
    private func prepareAttempt(_ state: inout AttemptHistory) throws -> Request {
        let resumeData = download?.resumeData
        let outgoing = try AttemptPolicy.outgoing(state.request, resuming: resumeData)
        // While what goes out is still the original request, storing it again would only copy it.
        if !state.sendsOriginal || resumeData != nil {
            machine.withLockedValue { $0.currentRequest = outgoing }
        }
        return outgoing
    }

    /// Sends one attempt; the exchange registers its cancel action with this task, which stops
    /// it when the task is cancelled or runs out of time (see ``TaskStateMachine/Stop``).
    @inline(__always)  // One caller; a frame less per attempt.
    private func send(
        _ outgoing: Request, reportsUpload: Bool, deadline: RequestDeadline?, recorder: ExchangeRecorder,
        readsBodyIncrementally: Bool
    ) async throws -> TransportResponse {
        var uploadReporter: (@Sendable (Int64) -> Void)?
        if reportsUpload {
            let bodyLength = outgoing.body.contentLength
            uploadReporter = { [weak self] sent in
                guard let self else { return }
                report(\.uploadProgress, to: uploadProgressHandler) { $0.advance(completed: sent, total: bodyLength) }
            }
        }
        let context = ExchangeContext(
            deadline: deadline?.instant, uploadProgress: uploadReporter,
            cancellation: ExchangeCancellation(target: self), recorder: recorder,
            readAheadLimit: overrides.readAheadLimit ?? (download == nil ? nil : TaskOverrides.downloadReadAheadLimit),
            readsBodyIncrementally: readsBodyIncrementally)
        return try await manager.sendHandlingCookies(
            outgoing, context: context, cache: cacheParticipation(for: outgoing))
    }

    /// Whether the body goes to a reader as it arrives: a download, a stream, or a data task
    /// whose `didReceiveResponse` hook may turn it into a download once the head is in, which is
    /// too late to choose the protocol.
    private func readsBodyIncrementally(_ hooks: SessionHooks) -> Bool {
        download != nil || streamHandoff != nil || hooks.didReceiveResponse != nil
    }

    /// The redirect's next request once the hooks agree, or nil when one declined it.
    /// - Throws: the need-new-body-stream hook's error, as ``CourierError/Code/hookFailed``.
    @inline(never)  // Its frame only while it runs, not in every waiting task's (see deliver).
    private func agreedRedirect(_ proposed: Request, response: ResponseHead, hooks: SessionHooks) async throws
        -> Request?
    {
        var next = proposed
        if let willRedirect = hooks.willPerformRedirection {
            guard let changed = try await untilStopped({ await willRedirect(self, response, proposed) }) else {
                return nil
            }
            next = changed
        }
        if !next.body.isEmpty, let needNewBody = hooks.needNewBodyStream {
            do {
                let request = next
                next.body = try await untilStopped { try await needNewBody(self, request) }
            } catch  where !isStopping {
                throw CourierError.wrapping(
                    error, as: .hookFailed, "the need-new-body-stream hook for \(next.url.absoluteString) threw")
            }
        }
        next = AttemptPolicy.redirectTarget(next, resuming: download?.resumeData != nil)
        for monitor in manager.eventMonitors { monitor.task(self, willRedirectTo: next, response: response) }
        return next
    }

    /// Asks the task's own retrier, then (when it declines) the manager's; when one says retry,
    /// waits out the delay (through the injectable sleeper) and returns true. A stopping task
    /// (cancelled or out of time) asks nobody: this is the one place that checks before a retry.
    /// - Throws: `.cancelled` when the task is stopped during the delay.
    @inline(never)  // Its frame only while it runs, not in every waiting task's (see deliver).
    private func retryAfterAsking(
        _ request: Request, response: ResponseHead?, error: CourierError?, state: inout AttemptHistory
    ) async throws -> Bool {
        guard !isStopping else { return false }
        var answer = RetryDecision.doNotRetry
        let retriers: [(any RequestRetrier)?] = [overrides.retrier, manager.interceptor]
        let retryCount = state.retryCount
        for retrier in retriers {
            guard let retrier, answer == .doNotRetry else { continue }
            answer = try await untilStopped {
                await retrier.retry(request, response: response, error: error, retryCount: retryCount)
            }
        }
        guard let delay = AttemptPolicy.retryDelay(answer) else { return false }
        for monitor in manager.eventMonitors { monitor.task(self, willRetry: request, after: delay) }
        state.retrying()
        if delay > .zero {
            let sleeper = manager.configuration.sleeper
            do {
                try await untilStopped { try await sleeper(delay) }
            } catch {
                throw cancelledError()
            }
        }
        return true
    }

    /// The final response: hands its head to the did-receive-response hook, then reads the body
    /// into memory or a file.
    // Its own frame, made only once the head is in: inlined, its locals (a file writer's, a
    // body collector's) were part of the frame every task holds while it waits for a server,
    // 10 KiB of the 36 KiB an open request cost (heaptrack, 10,000 held requests). The common
    // case, a body read into memory with no hook to ask, keeps none of the other branches'
    // locals either (`deliverAfterAsking`): over HTTP/2 most of 10,000 tasks sit here at once.
    @inline(never)
    private func deliver(
        _ sent: TransportResponse, request: Request, hooks: SessionHooks, resumeData: inout ResumeData?,
        observer: inout TaskObserver
    ) async throws -> SessionResponse {
        let gate = machine.withLockedValue { $0.receive(sent.head) }
        guard hooks.didReceiveResponse == nil, streamHandoff == nil, download == nil else {
            return try await deliverAfterAsking(
                sent, request: request, hooks: hooks, resumeData: &resumeData, observer: &observer)
        }
        if try isPaused(at: gate) { try await waitUntilResumed() }
        let data = try await receiveData(
            sent.body, head: sent.head, request: request, cap: manager.configuration.maximumBufferedResponseSize,
            didReceiveData: hooks.didReceiveData)
        return Self.response(request: request, head: sent.head, data: data, observer: &observer)
    }

    /// The response of a body read into memory, its attempt's metrics closed.
    @inline(never)
    private static func response(request: Request, head: ResponseHead, data: Data, observer: inout TaskObserver)
        -> SessionResponse
    {
        observer.attemptBodyEnded(decodedBytes: Int64(data.count), head: head)
        return SessionResponse(request: request, response: head, data: data, metrics: observer.metrics())
    }

    /// ``deliver(_:request:hooks:resumeData:observer:)`` when a did-receive-response hook, a
    /// stream or a download has a say.
    @inline(never)
    private func deliverAfterAsking(
        _ sent: TransportResponse, request: Request, hooks: SessionHooks, resumeData: inout ResumeData?,
        observer: inout TaskObserver
    ) async throws -> SessionResponse {
        let head = sent.head
        var download = self.download
        if let didReceiveResponse = hooks.didReceiveResponse {
            switch try await untilStopped({ await didReceiveResponse(self, head) }) {
            case .allow:
                break
            case .cancel:
                throw cancelledError()
            case .becomeDownload(let options, let destination):
                download = DownloadParameters(options: options, destination: destination, resumeData: nil)
                // The exchange began with a data task's read-ahead; a file writer gains from a download's.
                if overrides.readAheadLimit == nil { sent.raiseReadAhead?(TaskOverrides.downloadReadAheadLimit) }
            }
        }
        if let streamHandoff {
            // A stream: the task is done once the head is in, and the caller reads the body.
            try beginDelivering()
            streamHandoff.withLockedValue { $0 = sent.body }
            return SessionResponse(request: request, response: head, metrics: observer.metrics())
        }
        // The manager's configuration is read field by field: a copy of the whole value would
        // retain and release each of its references on every task.
        if let download {
            let (fileURL, received) = try await receiveFile(
                sent.body, head: head, request: request, download: download, resumable: !sent.bodyIsDecoded,
                temporaryDirectory: manager.configuration.temporaryDirectory, didReceiveData: hooks.didReceiveData,
                resumeData: &resumeData)
            observer.attemptBodyEnded(decodedBytes: received, head: head)
            return SessionResponse(request: request, response: head, fileURL: fileURL, metrics: observer.metrics())
        }
        try await waitWhileSuspended()
        let data = try await receiveData(
            sent.body, head: head, request: request, cap: manager.configuration.maximumBufferedResponseSize,
            didReceiveData: hooks.didReceiveData)
        return Self.response(request: request, head: head, data: data, observer: &observer)
    }
}

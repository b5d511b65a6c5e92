/// The manager's list of unfinished tasks: a task joins it when made and leaves it when it
/// completes, each in one turn of the manager's lock that also reads the hooks the task needs.
extension SessionManager {
    /// Makes a task and puts it on the list.
    func makeTask(
        kind: SessionTask.Kind, request: Request, uploadProgress: ProgressHandler?,
        downloadProgress: ProgressHandler?, download: SessionTask.DownloadParameters? = nil,
        streamHandoff: StreamHandoff? = nil, overrides: TaskOverrides = TaskOverrides()
    ) -> SessionTask {
        makeTaskReadingHooks(
            kind: kind, request: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress,
            download: download, streamHandoff: streamHandoff, overrides: overrides
        ).task
    }

    /// Makes and registers a task, and reads the session's hooks, in one turn of the lock.
    func makeTaskReadingHooks(
        kind: SessionTask.Kind, request: Request, uploadProgress: ProgressHandler?,
        downloadProgress: ProgressHandler?, download: SessionTask.DownloadParameters? = nil,
        streamHandoff: StreamHandoff? = nil, overrides: TaskOverrides = TaskOverrides()
    ) -> (task: SessionTask, hooks: SessionHooks) {
        state.withLockedValue { state in
            let task = SessionTask(
                identifier: state.nextIdentifier, kind: kind, request: request.movingURLCredentialsToAuthorization(),
                manager: self,
                uploadProgress: uploadProgress, downloadProgress: downloadProgress, download: download,
                streamHandoff: streamHandoff, overrides: overrides)
            state.nextIdentifier += 1
            state.tasks[task.identifier] = task
            return (task, state.hooks)
        }
    }

    /// Whether a data task for `request` can run on the caller's Swift task (saving a task and
    /// two thread hops per request): only when nothing in it waits on code that could be stopped
    /// by cancelling a Swift task alone. So: a request without a body (the redirects that follow
    /// it never gain one), on a transport that stops such exchanges through their
    /// ``ExchangeCancellation`` (``TransportCapabilities/cancelsBodylessExchangesThroughContext``);
    /// no interceptor (adapters, retriers and their delays are the caller's code); and none of
    /// the `hooks` that suspend.
    func runsOnCallersTask(_ request: Request, hooks: SessionHooks) -> Bool {
        interceptor == nil && cancelsBodylessExchangesThroughContext && request.body.isEmpty
            && hooks.willPerformRedirection == nil && hooks.needNewBodyStream == nil && hooks.didReceiveResponse == nil
    }

    /// Takes a completed task off the list, and returns the did-complete hook to call for it.
    func taskDidComplete(
        _ task: SessionTask
    ) -> (@Sendable (SessionTask, Result<SessionResponse, CourierError>) -> Void)? {
        state.withLockedValue { state in
            state.tasks.removeValue(forKey: task.identifier)
            return state.hooks.didComplete
        }
    }
}

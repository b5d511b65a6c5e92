import NIOConcurrencyHelpers

/// The manager's list of unfinished tasks: a task joins it when made and leaves it when it
/// completes, each in one turn of the manager's lock that also reads the hooks the task needs.
extension SessionManager {
    /// Makes a task, puts it on the list and reads the session's hooks, in one turn of the lock
    /// (an awaited task runs with those hooks, so it need not take the lock again).
    func makeTask(
        kind: SessionTask.Kind, request: Request, uploadProgress: ProgressHandler?,
        downloadProgress: ProgressHandler?, download: SessionTask.DownloadParameters? = nil,
        streamHandoff: NIOLockedValueBox<BodyChunks?>? = nil, overrides: TaskOverrides = TaskOverrides()
    ) -> (task: SessionTask, hooks: SessionHooks) {
        state.withLockedValue { state in
            let task = SessionTask(
                identifier: state.nextIdentifier, kind: kind, request: request.movingURLCredentialsToAuthorization(),
                manager: self, uploadProgress: uploadProgress, downloadProgress: downloadProgress, download: download,
                streamHandoff: streamHandoff, overrides: overrides)
            state.nextIdentifier += 1
            state.tasks[task.identifier] = task
            return (task, state.hooks)
        }
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

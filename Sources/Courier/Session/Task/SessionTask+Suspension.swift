/// Pausing: a suspended task stops before its next attempt or body chunk until it is resumed.
extension SessionTask {
    /// Waits while the task is paused; throws `.cancelled` once it is stopping (cancelled or out
    /// of time, as its state machine alone says). Inlined: it runs before every attempt and every
    /// body chunk, and only a paused task suspends, so the common case should not pay for an
    /// async call of its own.
    @inline(__always)
    func waitWhileSuspended() async throws {
        let now = machine.withLockedValue { (isPaused: $0.isPaused, isStopping: $0.isStopping) }
        if now.isPaused {
            try await waitUntilResumed()
        } else if now.isStopping {
            throw cancelledError()
        }
    }

    /// Moves the download progress to `completed` bytes and waits while the task is paused: what
    /// a body reader does between two chunks. One turn of the lock when there is no progress
    /// handler; a handler runs outside the lock, and the pause is read again after it, since
    /// it may have suspended or cancelled the task.
    /// - Throws: `.cancelled` once the task is stopping.
    @inline(__always)
    func waitWhileSuspended(reportingDownload completed: Int64, of total: Int64?) async throws {
        let now = machine.withLockedValue { machine in
            (
                progress: machine.downloadProgress.advance(completed: completed, total: total),
                isPaused: machine.isPaused, isStopping: machine.isStopping
            )
        }
        if let progress = now.progress, let handler = downloadProgressHandler {
            handler(progress)
            return try await waitWhileSuspended()
        }
        if now.isPaused {
            try await waitUntilResumed()
        } else if now.isStopping {
            throw cancelledError()
        }
    }

    /// The paused case of ``waitWhileSuspended()``. A stop wakes the reader too: cancelling the
    /// task (through its handle, its deadline, or the caller's Swift task) hands the paused
    /// readers to the stop.
    private func waitUntilResumed() async throws {
        while true {
            await withCheckedContinuation { (reader: PauseWaiter) in
                if !machine.withLockedValue({ $0.waitWhilePaused(reader) }) { reader.resume() }
            }
            let now = machine.withLockedValue { (isPaused: $0.isPaused, isStopping: $0.isStopping) }
            if now.isStopping { throw cancelledError() }
            if !now.isPaused { return }
        }
    }
}

/// Pausing: a suspended task stops before its next attempt or body chunk until it is resumed.
extension SessionTask {
    /// Waits while the task is paused; throws `.cancelled` once it is cancelled or out of time.
    /// Inlined: it runs before every attempt and every body chunk, and only a paused task
    /// suspends, so the common case should not pay for an async call of its own.
    @inline(__always)
    func waitWhileSuspended() async throws {
        let now = machine.withLockedValue { (isPaused: $0.isPaused, mustStop: $0.mustStop) }
        if now.isPaused {
            try await waitUntilResumed()
        } else if now.mustStop || Task.isCancelled {
            throw cancelledError()
        }
    }

    /// Moves the download progress to `completed` bytes and waits while the task is paused: what
    /// a body reader does between two chunks. One turn of the lock when there is no progress
    /// handler; a handler runs outside the lock, and the pause is read again after it, since
    /// it may have suspended or cancelled the task.
    /// - Throws: `.cancelled` once the task is cancelled or out of time.
    @inline(__always)
    func waitWhileSuspended(reportingDownload completed: Int64, of total: Int64?) async throws {
        let now = machine.withLockedValue { machine in
            (
                progress: machine.downloadProgress.advance(completed: completed, total: total),
                isPaused: machine.isPaused, mustStop: machine.mustStop
            )
        }
        if let progress = now.progress, let handler = downloadProgressHandler {
            handler(progress)
            return try await waitWhileSuspended()
        }
        if now.isPaused {
            try await waitUntilResumed()
        } else if now.mustStop || Task.isCancelled {
            throw cancelledError()
        }
    }

    /// The paused case of ``waitWhileSuspended()``.
    private func waitUntilResumed() async throws {
        // Cancelling the waiting Swift task opens the gate too.
        await withTaskCancellationHandler {
            await withCheckedContinuation { (gate: Gate) in
                let waits = !Task.isCancelled && machine.withLockedValue { $0.wait(at: gate) }
                if !waits { gate.resume() }
            }
        } onCancel: {
            for gate in machine.withLockedValue({ $0.takeGates() }) { gate.resume() }
        }
        if machine.withLockedValue({ $0.mustStop }) || Task.isCancelled { throw cancelledError() }
    }
}

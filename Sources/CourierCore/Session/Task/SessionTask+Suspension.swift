/// Pausing: a suspended task stops before its next attempt or body chunk until it is resumed.
extension SessionTask {
    /// Moves the download progress to `completed` bytes when given (what a body reader does
    /// between two chunks), then waits while the task is paused. One turn of the lock when there
    /// is no progress handler; a handler runs outside the lock, and the state is read again after
    /// it, since it may have suspended or cancelled the task. Inlined: it runs before every
    /// attempt and every body chunk, and only a paused task suspends.
    /// - Throws: `.cancelled` once the task is stopping (cancelled or out of time, as its state
    ///   machine alone says).
    @inline(__always)
    func waitWhileSuspended(reportingDownload completed: Int64? = nil, of total: Int64? = nil) async throws {
        if try isPaused(reportingDownload: completed, of: total) { try await waitUntilResumed() }
    }

    /// The synchronous part of ``waitWhileSuspended(reportingDownload:of:)``: true when the task
    /// is paused; also what a transport writing a handed-over download file (``ResponseBodyFile``)
    /// asks after each write, on its own thread. A function of its own, never inlined: inlined, its locals and its error were
    /// part of the async frame of every reader that calls it (a receiving task's frame holds only
    /// what lives across its suspensions; see BENCHMARKS.md, "What an open HTTP/2 request holds").
    /// - Throws: `.cancelled` once the task is stopping.
    @inline(never)
    func isPaused(reportingDownload completed: Int64?, of total: Int64?) throws -> Bool {
        var (progress, gate) = machine.withLockedValue { machine in
            (completed.flatMap { machine.downloadProgress.advance(completed: $0, total: total) }, machine.readerGate())
        }
        if let progress, let handler = downloadProgressHandler {
            handler(progress)
            gate = machine.withLockedValue { $0.readerGate() }
        }
        return try isPaused(at: gate)
    }

    /// True when `gate`, read under the lock with something else, says wait. Not inlined, for
    /// the reason ``isPaused(reportingDownload:of:)`` is not.
    /// - Throws: `.cancelled` when it says unwind.
    @inline(never)
    func isPaused(at gate: Machine.ReaderGate) throws -> Bool {
        if gate == .unwind { throw cancelledError() }
        return gate == .wait
    }

    /// The paused case of ``waitWhileSuspended(reportingDownload:of:)``. A stop (a cancel through
    /// the handle or the awaiting Swift task, the deadline) wakes the reader too.
    func waitUntilResumed() async throws {
        repeat {
            await withCheckedContinuation { (reader: PauseWaiter) in
                if !machine.withLockedValue({ $0.waitWhilePaused(reader) }) { reader.resume() }
            }
        } while try isPaused(at: machine.withLockedValue { $0.readerGate() })
    }
}

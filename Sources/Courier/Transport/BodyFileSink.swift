import NIOCore

/// A download's file, lent to the transport so that the thread that reads the connection also
/// writes the body, as curl and a plain `recv()` + `write()` loop do.
///
/// Why: a reader on the event loop and a writer on a Swift task are two busy threads for one
/// download, and beside the server and the kernel's page-cache work they compete for the cores.
/// On two cores that shape cost a fifth of the rate (BENCHMARKS.md, "Downloads written where
/// they are read"). A write to the page cache is a copy, like the read before it; it can still
/// stall (dirty-page throttling, a slow or remote file system), so a lent file is only written
/// on the event loop while each turn of writing, progress report included, stays under
/// ``stallLimit``: the first turn that takes longer gives the rest of the body back to the task.
///
/// Used by one thread at a time: the session's task until it lends the sink, the event loop
/// while it is lent, the task again once ``BodyFileWriting/writeRest(to:)`` returns; each
/// hand-over passes a lock or a continuation, which orders the accesses.
final class BodyFileSink: @unchecked Sendable {
    /// Longest a write may take on an event loop before the rest of the body goes back to the
    /// task; also what the task's first write must beat for the file to be lent at all.
    static let stallLimit = TimeAmount.milliseconds(20)

    /// The file the body goes to.
    let file: DownloadFile
    /// ``stallLimit``, or a test's own.
    let writeTimeLimit: TimeAmount
    /// Called on the event loop after each write with the file's size; false gives the rest of
    /// the body back to the task (which then waits while the task is paused, or stops).
    let didWrite: @Sendable (Int64) -> Bool

    init(file: DownloadFile, writeTimeLimit: TimeAmount = stallLimit, didWrite: @escaping @Sendable (Int64) -> Bool) {
        self.file = file
        self.writeTimeLimit = writeTimeLimit
        self.didWrite = didWrite
    }

    /// Writes `buffer` and says whether the file may stay lent: ``didWrite`` agreed, and the
    /// event loop's turn of writing, from `turnStarted` to after ``didWrite`` (a progress
    /// handler runs there too), took less than `writeTimeLimit`.
    /// - Throws: ``CourierError`` `.downloadFailed` from the file.
    func write(_ buffer: ByteBuffer, turnStarted: NIODeadline) throws -> Bool {
        try file.write(buffer)
        let agreed = didWrite(file.bytesWritten)
        return agreed && NIODeadline.now() - turnStarted < writeTimeLimit
    }
}

/// A response body that can write itself into a lent file on the thread that reads it
/// (``BodyChunks/fileWriter``).
protocol BodyFileWriting: Sendable {
    /// Writes what has arrived and what arrives next into `sink` until the body ends or fails, a
    /// write stalls, or `sink` asks for the rest; then gives the file back. The body's iterator
    /// then yields whatever follows: nothing after the end, the exchange's error after a failure.
    /// - Throws: ``CourierError`` `.downloadFailed` when a write failed; the exchange is then cancelled.
    func writeRest(to sink: BodyFileSink) async throws
}

import NIOCore

/// A download's file, handed by the session to a transport whose body offers a
/// ``ResponseBodyFileWriter``, so that the thread that reads the connection also writes the body,
/// as curl and a plain `recv()` + `write()` loop do.
///
/// Why: a reader on an event loop and a writer on a Swift task are two busy threads for one
/// download, and beside the server and the kernel's page-cache work they compete for the cores.
/// On two cores that shape cost a fifth of the rate (BENCHMARKS.md, "Downloads written where
/// they are read").
///
/// Why it keeps a clock of its own (``stallLimit``): it is not a request timeout but the guard of
/// the thread that writes. A write to the page cache is a copy, like the read before it, but it can
/// stall (dirty-page throttling, a slow or remote file system), and a stalled event loop stalls
/// every other connection on it. So the transport may write only while each of its turns of
/// writing, progress report included, stays under ``stallLimit``: ``write(_:turnStarted:)`` says
/// false after the first turn that takes longer, and the transport hands the rest of the body back.
///
/// Used by one thread at a time: the session's task until it hands the file over, the transport
/// while it writes, the task again once ``ResponseBodyFileWriter/writeRemainingBody(to:)``
/// returns; each hand-over passes a lock or a continuation, which orders the accesses.
public final class ResponseBodyFile: @unchecked Sendable {
    /// Longest one turn of writes may take on the transport's thread before the rest of the body
    /// goes back to the task; also what the task's first write must beat for the file to be
    /// handed over at all.
    public static let stallLimit = TimeAmount.milliseconds(20)

    /// The file the body goes to.
    let file: DownloadFile
    /// ``stallLimit``, or a test's own.
    let writeTimeLimit: TimeAmount
    /// Called after each write with the file's size; false gives the rest of the body back to the
    /// task (which then waits while the task is paused, or stops).
    let didWrite: @Sendable (Int64) -> Bool

    init(file: DownloadFile, writeTimeLimit: TimeAmount = stallLimit, didWrite: @escaping @Sendable (Int64) -> Bool) {
        self.file = file
        self.writeTimeLimit = writeTimeLimit
        self.didWrite = didWrite
    }

    /// Writes `buffer` and says whether the transport may go on writing: the session agreed
    /// (the task is not paused or stopping), and the transport's turn of writing, from
    /// `turnStarted` to now (a progress handler runs here too), took less than ``stallLimit``.
    /// - Throws: ``CourierError`` `.downloadFailed` from the file.
    public func write(_ buffer: ByteBuffer, turnStarted: NIODeadline) throws -> Bool {
        try file.write(buffer)
        let agreed = didWrite(file.bytesWritten)
        return agreed && NIODeadline.now() - turnStarted < writeTimeLimit
    }
}

/// What a transport's response body offers when it can write itself into a download's file on
/// the thread that reads the connection (``BodyChunks/fileWriter``): the session hands it the
/// file after its own first write shows that writes keep up.
public protocol ResponseBodyFileWriter: Sendable {
    /// Writes what has arrived and what arrives next into `file` until the body ends or fails,
    /// ``ResponseBodyFile/write(_:turnStarted:)`` says false, or the task asks for the rest; then
    /// hands the file back. The body's iterator then yields whatever follows: nothing after the
    /// end, the exchange's error after a failure. Cancelling the calling task cancels the exchange.
    /// - Throws: ``CourierError`` `.downloadFailed` when a write failed; the exchange is then cancelled.
    func writeRemainingBody(to file: ResponseBodyFile) async throws
}

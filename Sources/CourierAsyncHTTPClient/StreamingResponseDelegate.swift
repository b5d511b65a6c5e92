import AsyncHTTPClient
import CourierCore
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Turns AsyncHTTPClient's delegate callbacks into an awaitable response head and a pulled body,
/// with the response's state in a ``ResponseStreamStateMachine``.
///
/// Backpressure: once `bufferedByteLimit` bytes wait unread, the future given back to
/// AsyncHTTPClient stays pending, which stops reads from the socket until the reader catches up;
/// below that the socket keeps being read while the reader works, so a reader that falls behind
/// finds several parts waiting and takes them without suspending. Upload progress counts each
/// body part once the channel has written it.
///
/// The one idle-read timer: the transport's clients run without AsyncHTTPClient's read timeout,
/// which re-arms a timer on every response part (three timers and ~15 allocations per small
/// request). Instead, once the request has been sent, one timer per exchange checks when a
/// response part last arrived and fails the request with `readTimeout` when none came for
/// `idleReadTimeout`; it re-arms only when it fires early, and not while the socket is held back
/// for a slow reader. The whole-request deadline is the session's, which stops the exchange
/// through `ExchangeCancellation`.
final class StreamingResponseDelegate: HTTPClientResponseDelegate, NIOScheduledCallbackHandler, Sendable {
    typealias Response = Void
    typealias HeadWaiter = UnsafeContinuation<HTTPResponseHead, any Error>
    typealias BodyWaiter = UnsafeContinuation<ByteBuffer?, any Error>
    typealias Machine = ResponseStreamStateMachine<HeadWaiter, BodyWaiter, FileWriter>

    /// Bytes held for a slow reader before reads from the socket pause, unless the exchange asks
    /// for another limit (`ExchangeContext.readAheadLimit`).
    static let defaultBufferedByteLimit = 1 << 20

    /// A download's file handed over to the event loop, and the task waiting to get it back.
    struct FileWriter: Sendable {
        let file: ResponseBodyFile
        let waiter: UnsafeContinuation<Void, any Error>
    }

    /// What the event loop and the reader share, under `state`'s lock: the response's machine,
    /// the request's progress, and the idle-read timer.
    struct State: Sendable {
        var machine: Machine
        var bytesSent: Int64 = 0
        /// Set when AsyncHTTPClient reports the whole request written to the connection.
        var requestSent = false
        /// Set before Courier itself cancels the exchange, so that a `cancelled` failure can be
        /// told apart from one AsyncHTTPClient reports for a connection that was closing.
        var cancelledByCourier = false
        var lastResponsePart = NIODeadline.uptimeNanoseconds(0)
        /// The armed idle timer and the exchange it fails (held only while armed).
        var idleTimer: (callback: NIOScheduledCallback, task: HTTPClient.Task<Void>)?
        /// When the head arrived, after ``clockOrigin``, for the recorder at the end (a `Duration`:
        /// an `Instant`'s layout is not frozen, and would put every access through the runtime).
        var headReceived: Duration?
    }

    /// The reading ``State/headReceived`` counts from.
    private static let clockOrigin = ContinuousClock.now

    let state: NIOLockedValueBox<State>
    private let uploadProgress: (@Sendable (Int64) -> Void)?
    private let idleReadTimeout: TimeAmount?
    private let sendsBody: Bool
    /// Where the exchange's timings, sent bytes and connection go, for `TaskMetrics`.
    private let recorder: ExchangeRecorder?
    /// Where the connection's probe noted this request's connection.
    private let connectionLedger: ConnectionLedger?

    /// - Parameters:
    ///   - sendsBody: whether the request has a body; only then can AsyncHTTPClient fail the task
    ///     without telling this delegate (see `didSendRequestHead`).
    ///   - bufferedByteLimit: bytes held for a slow reader before reads pause; nil for the default.
    init(
        uploadProgress: (@Sendable (Int64) -> Void)?, idleReadTimeout: TimeAmount? = nil, sendsBody: Bool = true,
        recorder: ExchangeRecorder? = nil, connectionLedger: ConnectionLedger? = nil, bufferedByteLimit: Int? = nil
    ) {
        self.uploadProgress = uploadProgress
        self.state = NIOLockedValueBox(
            State(machine: Machine(bufferedByteLimit: bufferedByteLimit ?? Self.defaultBufferedByteLimit)))
        self.idleReadTimeout = idleReadTimeout
        self.sendsBody = sendsBody
        self.recorder = recorder
        self.connectionLedger = connectionLedger
    }

    /// Cancels `task` as Courier's own cancel (a caller's cancel, a deadline, a dropped body, a
    /// failed write), noted first so that its `cancelled` failure is told apart.
    func cancel(_ task: HTTPClient.Task<Void>) {
        state.withLockedValue { $0.cancelledByCourier = true }
        task.cancel()
    }

    /// Lets up to `limit` bytes wait for the reader from now on, and resumes reading from the
    /// socket when it was paused under a lower limit; a lower limit than the current one is ignored.
    func raiseBufferedByteLimit(to limit: Int) {
        state.withLockedValue { $0.machine.raiseLimit(to: limit) }?.succeed(())
    }

    /// True once ``cancel(_:)`` was called.
    var wasCancelledByCourier: Bool { state.withLockedValue { $0.cancelledByCourier } }

    /// True once AsyncHTTPClient has written the whole request, body included, to the connection.
    var isRequestSent: Bool { state.withLockedValue { $0.requestSent } }

    /// True once the response ended, well or badly; a body dropped before then must cancel the request.
    var isComplete: Bool { state.withLockedValue { $0.machine.isComplete() } }

    // MARK: Consumer side (Swift tasks)

    /// Waits for the response head. Cancelling the calling task cancels `task` (see ``cancel(_:)``).
    /// - Throws: the error that ended the request before the head arrived.
    func head(task: HTTPClient.Task<Void>) async throws -> HTTPResponseHead {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: HeadWaiter) in
                if let ready = state.withLockedValue({ $0.machine.waitForHead(continuation) }) {
                    continuation.resume(with: ready)
                }
            }
        } onCancel: {
            cancel(task)
        }
    }

    /// The next body chunk, or nil at the end; `ended` is set when the chunk is the body's last,
    /// and the reader need not ask for the end (one turn of the lock fewer for a small response).
    /// Cancelling the calling task cancels `task`.
    /// - Throws: the error that ended the request.
    func nextBodyPart(ended: inout Bool, task: HTTPClient.Task<Void>) async throws -> ByteBuffer? {
        // The common case, a part already waiting, needs no continuation.
        if let ready = try Self.outcome(state.withLockedValue { $0.machine.takePart() }, ended: &ended) {
            return ready
        }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: BodyWaiter) in
                // The state may have moved since the look above; the machine looks again.
                let take = state.withLockedValue { $0.machine.takePart(waiter: continuation) }
                do {
                    if let ready = try Self.outcome(take, ended: &ended) { continuation.resume(returning: ready) }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            task.cancel()
        }
    }

    /// What a take gives the reader: a part (nil at the end, wrapped), or nil to wait.
    private static func outcome(_ take: Machine.Take, ended: inout Bool) throws -> ByteBuffer?? {
        switch take {
        case .part(let part, let resumed, let isLast):
            resumed?.succeed(())
            ended = isLast
            return .some(part)
        case .end: return .some(nil)
        case .failure(let error): throw error
        case .wait: return nil
        }
    }

    // MARK: Producer side (AsyncHTTPClient, on the event loop)

    func didSendRequestHead(task: HTTPClient.Task<Void>, _ head: HTTPRequestHead) {
        // AsyncHTTPClient can fail the task without calling `didReceiveError` once the head is
        // out: when the last write of the request body fails after the response has ended.
        // Watched from here, on the task's event loop, adding the callback costs no thread hop;
        // every failure before this point reaches `didReceiveError`. A request without a body
        // goes out with its end in one write, so it has no such last write to fail (and a
        // second callback on the task's future would cost it an allocation).
        recorder?.requestHeadSent(connection: connectionLedger?.take(head), endsRequest: !sendsBody)
        guard sendsBody else { return }
        task.futureResult.whenFailure { error in self.fail(error) }
    }

    func didSendRequestPart(task: HTTPClient.Task<Void>, _ part: IOData) {
        guard uploadProgress != nil || recorder != nil else { return }
        let sent = state.withLockedValue { state in
            state.bytesSent += Int64(part.readableBytes)
            return state.bytesSent
        }
        uploadProgress?(sent)
    }

    func didSendRequest(task: HTTPClient.Task<Void>) {
        // As AsyncHTTPClient's read timeout: the wait for the response starts once the request is
        // out. Armed before the one turn of the lock below: its callback runs on this event loop,
        // so not before this returns.
        let now = NIODeadline.now()
        // A scheduled callback with this delegate as its handler: no closure, promise or future
        // per exchange, as `scheduleTask` would allocate.
        let timer = idleReadTimeout.flatMap { try? task.eventLoop.scheduleCallback(at: now + $0, handler: self) }
        let (bytesSent, stale) = state.withLockedValue { state -> (Int64, NIOScheduledCallback?) in
            state.requestSent = true
            state.lastResponsePart = now
            guard let timer, !state.machine.isComplete() else { return (state.bytesSent, timer) }
            state.idleTimer = (timer, task)
            return (state.bytesSent, nil)
        }
        stale?.cancel()
        // A request without a body was recorded as sent with its head.
        if sendsBody { recorder?.requestSent(bodyBytes: bytesSent) }
    }

    func handleScheduledCallback(eventLoop: some EventLoop) {
        guard let idleReadTimeout else { return }
        let now = NIODeadline.now()
        let expired = state.withLockedValue { state -> HTTPClient.Task<Void>? in
            guard !state.machine.isComplete(), let task = state.idleTimer?.task else { return nil }
            let due = state.lastResponsePart + idleReadTimeout
            if now < due || state.machine.isHoldingSocket {
                // A part arrived since the timer was set, or the socket is held back for the reader.
                let next = max(due, now + .nanoseconds(idleReadTimeout.nanoseconds / 4))
                state.idleTimer = (try? eventLoop.scheduleCallback(at: next, handler: self)).map { ($0, task) }
                return nil
            }
            state.idleTimer = nil
            return task
        }
        expired?.fail(reason: HTTPClientError.readTimeout)
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let arrived = recorder == nil ? nil : Self.clockOrigin.duration(to: .now)
        let now = idleReadTimeout == nil ? nil : NIODeadline.now()
        let waiter = state.withLockedValue { state in
            if let now { state.lastResponsePart = now }
            state.headReceived = arrived
            return state.machine.receivedHead(head)
        }
        if let waiter {
            // Woken after the rest of this read is handled rather than now: a small response's
            // body and end usually arrive in the same read, so the reader then finds them
            // waiting instead of suspending again for each (measured: ~40% more context
            // switches per small request when woken at once).
            task.eventLoop.execute { waiter.resume(returning: head) }
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let now = idleReadTimeout == nil ? nil : NIODeadline.now()
        let arrival = state.withLockedValue { state in
            if let now { state.lastResponsePart = now }
            return state.machine.receivedPart(buffer) { task.eventLoop.makePromise() }
        }
        switch arrival {
        case .write(let writer):
            write(CircularBuffer(CollectionOfOne(buffer)), with: writer, task: task)
        case .deliver(let waiter):
            waiter.resume(returning: buffer)
        case .readOn:
            break
        case .pause(let promise):
            return promise.futureResult
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        // What arrived before a broken connection is still the reader's (the events of a stream
        // cut mid-body); only Courier's own cancel drops it.
        fail(error, keepingBufferedChunks: true)
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        end { state in
            // Before the state shows the end to a reader, so the session finds the instants
            // when it sees the end (the recorder's lock is a leaf: it calls nothing).
            recorder?.responseBodyReceived(headAt: state.headReceived.map { Self.clockOrigin.advanced(by: $0) })
            return state.machine.end(
                failure: nil, keepingHeldParts: true, headless: HTTPClientError.remoteConnectionClosed)
        }
    }

    /// Ends the response with `error` unless it already ended; wakes every waiter. Parts not yet
    /// read are dropped unless `keepingBufferedChunks` (and Courier did not cancel): the reader
    /// then gets them before the error.
    func fail(_ error: any Error, keepingBufferedChunks: Bool = false) {
        end { state in
            let keeps = keepingBufferedChunks && !state.cancelledByCourier
            let ending = state.machine.end(failure: error, keepingHeldParts: keeps, headless: error)
            if ending != nil, let headReceived = state.headReceived {
                recorder?.responseHeadReceived(at: Self.clockOrigin.advanced(by: headReceived))
            }
            return ending
        }
    }

    /// Ends the response as `transition` says, stops the idle timer, and wakes whom the end concerns.
    private func end(_ transition: (inout State) -> Machine.Ending?) {
        let (ending, idleTimer) = state.withLockedValue { state in
            defer { state.idleTimer = nil }
            return (transition(&state), state.idleTimer?.callback)
        }
        idleTimer?.cancel()
        guard let ending else { return }
        // The reader, given its file back, meets a failure at its next part.
        ending.fileWriter?.waiter.resume()
        let ended: Result<Void, any Error> = ending.error.map { .failure($0) } ?? .success(())
        // Only an end before the head has a head waiter, and that end is a failure.
        if let error = ending.error { ending.headWaiter?.resume(throwing: error) }
        ending.bodyWaiter?.resume(with: ended.map { nil })
        ending.pausedSocket?.completeWith(ended)
    }

    // MARK: A download's file, written on the event loop

    /// Hands `file` to the event loop: the parts waiting and those that arrive next are written
    /// into it there (see ``ResponseBodyFile``) until the response ends or fails, a write stalls,
    /// or the session asks for the rest; then it is handed back and ``nextBodyPart(ended:task:)``
    /// yields whatever follows. Cancelling the calling task cancels the exchange.
    /// - Throws: `CourierError` `.downloadFailed` when a write failed; `task` is cancelled then.
    func writeRemainingBody(to file: ResponseBodyFile, task: HTTPClient.Task<Void>) async throws {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (waiter: UnsafeContinuation<Void, any Error>) in
                // On the event loop, so that no part can arrive between the waiting ones and the
                // hand-over. The transport's loops (the process's singleton group) are never shut down.
                task.eventLoop.execute {
                    let writer = FileWriter(file: file, waiter: waiter)
                    guard let waiting = self.state.withLockedValue({ $0.machine.handOverFile(writer) }) else {
                        // An ended response keeps its parts for the reader, which writes them itself.
                        return waiter.resume()
                    }
                    self.write(waiting, with: writer, task: task)
                }
            }
        } onCancel: {
            self.cancel(task)
        }
    }

    /// Writes `parts`, and any that arrive meanwhile, into the handed-over file (the machine marked
    /// its writer busy); then keeps it, or hands it back with the parts not written held again.
    private func write(_ parts: CircularBuffer<ByteBuffer>, with writer: FileWriter, task: HTTPClient.Task<Void>) {
        // One turn of the event loop writes for at most the file's stall limit (and one write):
        // the parts that waited for the hand-over can be many.
        let turnStarted = NIODeadline.now()
        var next = Machine.AfterWrite.write(parts)
        var keepsFile = true
        var writeError: (any Error)?
        while case .write(var parts) = next {
            while keepsFile, let part = parts.popFirst() {
                do {
                    keepsFile = try writer.file.write(part, turnStarted: turnStarted)
                } catch {
                    writeError = error
                    keepsFile = false
                }
            }
            let wroteUntil = NIODeadline.now()
            next = state.withLockedValue { state in
                // The loop could not read while it wrote: the idle read timeout counts from now.
                state.lastResponsePart = max(state.lastResponsePart, wroteUntil)
                return state.machine.wroteParts(keepsFile: keepsFile, failed: writeError != nil, unwritten: parts)
            }
        }
        // The machine asks for more writes only while the file is kept.
        guard case .done(let handedBack, let resumed) = next else { return }
        if writeError != nil { cancel(task) }
        // A socket paused for the read-ahead must hear of a failed write: AsyncHTTPClient,
        // having read the end already, waits on this promise before it ends the exchange.
        let written: Result<Void, any Error> = writeError.map { .failure($0) } ?? .success(())
        resumed?.completeWith(written)
        handedBack?.waiter.resume(with: written)
    }
}

import AsyncHTTPClient
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Turns AsyncHTTPClient's delegate callbacks into an awaitable response head and a pulled body.
///
/// The delegate API is the only one in AsyncHTTPClient 1.37 that can send a `FileRegion`
/// (sendfile), so file uploads over plain HTTP use it; this type gives them the same shape as
/// the async API: `head()` suspends until the status line arrives, `nextBodyPart()` until a
/// chunk does. Backpressure: once `bufferedByteLimit` bytes wait unread, the future given back
/// to AsyncHTTPClient stays pending, which stops reads from the socket until the reader catches
/// up; below that the socket keeps being read while the reader works, so a reader that falls
/// behind finds several chunks waiting and takes them without suspending. Upload progress
/// counts each body part once the channel has written it.
///
/// Idle reads: the delegate path's client runs without AsyncHTTPClient's read timeout, which
/// re-arms a timer on every response part (three timers and ~15 allocations per small
/// request). Instead, once the request has been sent, one timer per exchange checks when a
/// response part last arrived and fails the request with `readTimeout` when none came for
/// `idleReadTimeout`; it re-arms only when it fires early, and not while this delegate is
/// holding the socket back for a slow reader.
final class StreamingResponseDelegate: HTTPClientResponseDelegate, NIOScheduledCallbackHandler, Sendable {
    typealias Response = Void

    /// Bytes held for a slow reader before reads from the socket pause, unless the exchange asks
    /// for another limit (``ExchangeContext/readAheadLimit``).
    static let defaultBufferedByteLimit = 1 << 20

    /// What the event loop and the reader share, under `state`'s lock.
    struct State {
        var head: HTTPResponseHead?
        var headWaiter: UnsafeContinuation<HTTPResponseHead, any Error>?
        var chunks = CircularBuffer<ByteBuffer>(initialCapacity: 4)
        var bufferedBytes = 0
        var bodyWaiter: UnsafeContinuation<ByteBuffer?, any Error>?
        var pausedProducer: EventLoopPromise<Void>?
        var isFinished = false
        var failure: (any Error)?
        var bytesSent: Int64 = 0
        var lastResponsePart = NIODeadline.uptimeNanoseconds(0)
        var idleTimer: NIOScheduledCallback?
        /// The exchange the idle timer fails; held only while the timer is armed.
        var idleTask: HTTPClient.Task<Void>?
        /// Set before Courier itself cancels the exchange, so that a `cancelled` failure can be
        /// told apart from one AsyncHTTPClient reports for a connection that was closing.
        var cancelledByCourier = false
        /// Set when AsyncHTTPClient reports the whole request written to the connection.
        var requestSent = false
        /// Bytes held for a slow reader before reads from the socket pause; at least 1, so that
        /// a paused socket always has a chunk whose taking resumes it. Only ever raised.
        var bufferedByteLimit: Int
        /// The download's file while the reader has lent it (``writeRest(to:task:)``): body parts
        /// are written into it as they arrive instead of waiting in `chunks`.
        var lentFile: LentFile?
    }

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
            State(bufferedByteLimit: max(1, bufferedByteLimit ?? Self.defaultBufferedByteLimit)))
        self.idleReadTimeout = idleReadTimeout
        self.sendsBody = sendsBody
        self.recorder = recorder
        self.connectionLedger = connectionLedger
    }

    /// Records that Courier (a caller's cancel, a deadline, a dropped body) cancels the exchange now.
    func noteCancelledByCourier() {
        state.withLockedValue { $0.cancelledByCourier = true }
    }

    /// Lets up to `limit` bytes wait for the reader from now on, and resumes reading from the
    /// socket when it was paused under a lower limit; a lower limit than the current one is ignored.
    func raiseBufferedByteLimit(to limit: Int) {
        let resumed = state.withLockedValue { state -> EventLoopPromise<Void>? in
            guard limit > state.bufferedByteLimit else { return nil }
            state.bufferedByteLimit = limit
            guard state.bufferedBytes < limit, let paused = state.pausedProducer else { return nil }
            state.pausedProducer = nil
            return paused
        }
        resumed?.succeed(())
    }

    /// True once ``noteCancelledByCourier()`` was called.
    var wasCancelledByCourier: Bool {
        state.withLockedValue { $0.cancelledByCourier }
    }

    /// True once AsyncHTTPClient has written the whole request, body included, to the connection.
    var isRequestSent: Bool {
        state.withLockedValue { $0.requestSent }
    }

    /// True once the response ended, well or badly; a body dropped before then must cancel the request.
    var isComplete: Bool {
        state.withLockedValue { $0.isFinished || $0.failure != nil }
    }

    // MARK: Consumer side (Swift tasks)

    /// Waits for the response head. Cancelling the calling task calls `onCancel` (which cancels the request).
    /// - Throws: the error that ended the request before the head arrived.
    func head(onCancel: @escaping @Sendable () -> Void) async throws -> HTTPResponseHead {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation {
                (continuation: UnsafeContinuation<HTTPResponseHead, any Error>) in
                let ready: Result<HTTPResponseHead, any Error>? = state.withLockedValue { state in
                    if let head = state.head { return .success(head) }
                    if let failure = state.failure { return .failure(failure) }
                    state.headWaiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            onCancel()
        }
    }

    /// The next body chunk, or nil at the end. Cancelling the calling task calls `onCancel`.
    /// - Throws: the error that ended the request.
    func nextBodyPart(onCancel: @escaping @Sendable () -> Void) async throws -> ByteBuffer? {
        // The common case, a chunk already waiting, needs no continuation.
        enum Immediate {
            case chunk(ByteBuffer, EventLoopPromise<Void>?)
            case end
            case failed(any Error)
        }
        let immediate: Immediate? = state.withLockedValue { state in
            if let chunk = state.chunks.popFirst() {
                state.bufferedBytes -= chunk.readableBytes
                let resumed = state.bufferedBytes < state.bufferedByteLimit ? state.pausedProducer : nil
                if resumed != nil { state.pausedProducer = nil }
                return .chunk(chunk, resumed)
            }
            if let failure = state.failure { return .failed(failure) }
            if state.isFinished { return .end }
            return nil
        }
        switch immediate {
        case .chunk(let chunk, let resumed):
            resumed?.succeed(())
            return chunk
        case .end:
            return nil
        case .failed(let error):
            throw error
        case nil:
            break
        }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<ByteBuffer?, any Error>) in
                // The state may have moved since the check above; look again under the lock.
                let (ready, resumed): (Result<ByteBuffer?, any Error>?, EventLoopPromise<Void>?) = state.withLockedValue
                {
                    state in
                    if let chunk = state.chunks.popFirst() {
                        state.bufferedBytes -= chunk.readableBytes
                        defer { state.pausedProducer = nil }
                        return (.success(chunk), state.pausedProducer)
                    }
                    if let failure = state.failure { return (.failure(failure), nil) }
                    if state.isFinished { return (.success(nil), nil) }
                    state.bodyWaiter = continuation
                    return (nil, nil)
                }
                resumed?.succeed(())
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            onCancel()
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
        if let recorder {
            recorder.requestHeadSent()
            if let connection = connectionLedger?.take(head) { recorder.connection(connection) }
        }
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
        state.withLockedValue { $0.requestSent = true }
        if let recorder {
            recorder.requestSent(bodyBytes: sendsBody ? state.withLockedValue { $0.bytesSent } : 0)
        }
        // As AsyncHTTPClient's read timeout: the wait for the response starts once the request is out.
        guard let idleReadTimeout else { return }
        let now = NIODeadline.now()
        // A scheduled callback with this delegate as its handler: no closure, promise or future
        // per exchange, as `scheduleTask` would allocate.
        guard let timer = try? task.eventLoop.scheduleCallback(at: now + idleReadTimeout, handler: self) else { return }
        let stale = state.withLockedValue { state -> NIOScheduledCallback? in
            state.lastResponsePart = now
            if state.isFinished || state.failure != nil { return timer }
            state.idleTimer = timer
            state.idleTask = task
            return nil
        }
        stale?.cancel()
    }

    func handleScheduledCallback(eventLoop: some EventLoop) {
        guard let idleReadTimeout else { return }
        let now = NIODeadline.now()
        let expired = state.withLockedValue { state -> HTTPClient.Task<Void>? in
            guard !state.isFinished, state.failure == nil else { return nil }
            let due = state.lastResponsePart + idleReadTimeout
            if now < due || state.pausedProducer != nil {
                // A part arrived since the timer was set, or the socket is held back for the reader.
                let next = max(due, now + .nanoseconds(idleReadTimeout.nanoseconds / 4))
                state.idleTimer = try? eventLoop.scheduleCallback(at: next, handler: self)
                return nil
            }
            state.idleTimer = nil
            defer { state.idleTask = nil }
            return state.idleTask
        }
        expired?.fail(reason: HTTPClientError.readTimeout)
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        recorder?.responseHeadReceived()
        let now = idleReadTimeout == nil ? nil : NIODeadline.now()
        let waiter = state.withLockedValue { state in
            if let now { state.lastResponsePart = now }
            state.head = head
            defer { state.headWaiter = nil }
            return state.headWaiter
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
        enum Action {
            case deliver(UnsafeContinuation<ByteBuffer?, any Error>)
            case buffered
            case pause(EventLoopPromise<Void>)
            case write(BodyFileSink)
        }
        let now = idleReadTimeout == nil ? nil : NIODeadline.now()
        let action: Action = state.withLockedValue { state in
            if let now { state.lastResponsePart = now }
            if var lent = state.lentFile, !lent.isWriting {
                lent.isWriting = true
                state.lentFile = lent
                return .write(lent.sink)
            }
            if let waiter = state.bodyWaiter {
                state.bodyWaiter = nil
                return .deliver(waiter)
            }
            state.chunks.append(Self.compacted(buffer))
            state.bufferedBytes += buffer.readableBytes
            guard state.bufferedBytes >= state.bufferedByteLimit else { return .buffered }
            let promise = task.eventLoop.makePromise(of: Void.self)
            state.pausedProducer = promise
            return .pause(promise)
        }
        switch action {
        case .write(let sink):
            writeLent(CircularBuffer(CollectionOfOne(buffer)), into: sink, task: task)
            return task.eventLoop.makeSucceededVoidFuture()
        case .deliver(let waiter):
            waiter.resume(returning: buffer)
            return task.eventLoop.makeSucceededVoidFuture()
        case .buffered:
            return task.eventLoop.makeSucceededVoidFuture()
        case .pause(let promise):
            return promise.futureResult
        }
    }

    /// `buffer`, or a copy of it when it is a small slice of a much larger storage.
    ///
    /// A part that waits in the read-ahead keeps its whole storage alive. Over TLS a part is often
    /// a small slice (a TLS record's worth, or one HTTP/2 DATA frame of 8-16 KiB) of a buffer of
    /// up to 512 KiB of decrypted bytes, so 8 MiB of waiting parts can hold far more than 8 MiB,
    /// and the buffers they pin cannot be reused. Copying the small part costs less (BENCHMARKS.md,
    /// "Large downloads over HTTP/2": faster over TLS, HTTP/1.1 and HTTP/2 alike).
    static func compacted(_ buffer: ByteBuffer) -> ByteBuffer {
        guard buffer.storageCapacity > 2 * buffer.readableBytes + 4096 else { return buffer }
        var copy = ByteBufferAllocator().buffer(capacity: buffer.readableBytes)
        copy.writeImmutableBuffer(buffer)
        return copy
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        // What arrived before a broken connection is still the reader's (the events of a stream
        // cut mid-body); only Courier's own cancel drops it.
        fail(error, keepingBufferedChunks: true)
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        // Before any reader is woken, so the session finds the instant when it sees the end.
        recorder?.responseBodyReceived()
        let (headWaiter, bodyWaiter, idleTimer, lender) = state.withLockedValue { state in
            state.isFinished = true
            defer {
                state.headWaiter = nil
                state.bodyWaiter = nil
                state.idleTimer = nil
                state.idleTask = nil
            }
            return (state.headWaiter, state.bodyWaiter, state.idleTimer, Self.endLend(&state))
        }
        idleTimer?.cancel()
        lender?.resume()
        headWaiter?.resume(throwing: HTTPClientError.remoteConnectionClosed)
        bodyWaiter?.resume(returning: nil)
    }

    /// Ends the response with `error` unless it already ended; wakes every waiter. Chunks not yet
    /// read are dropped unless `keepingBufferedChunks` (and Courier did not cancel): the reader
    /// then gets them before the error.
    func fail(_ error: any Error, keepingBufferedChunks: Bool = false) {
        let (headWaiter, bodyWaiter, paused, idleTimer, lender) = state.withLockedValue { state in
            if state.isFinished || state.failure != nil {
                return (
                    UnsafeContinuation<HTTPResponseHead, any Error>?.none,
                    UnsafeContinuation<ByteBuffer?, any Error>?.none,
                    EventLoopPromise<Void>?.none, NIOScheduledCallback?.none,
                    UnsafeContinuation<Void, any Error>?.none
                )
            }
            state.failure = error
            if !keepingBufferedChunks || state.cancelledByCourier {
                state.chunks.removeAll()
                state.bufferedBytes = 0
            }
            defer {
                state.headWaiter = nil
                state.bodyWaiter = nil
                state.pausedProducer = nil
                state.idleTimer = nil
                state.idleTask = nil
            }
            return (
                state.headWaiter, state.bodyWaiter, state.pausedProducer, state.idleTimer, Self.endLend(&state)
            )
        }
        idleTimer?.cancel()
        // The reader, given its file back, meets the failure at its next part.
        lender?.resume()
        headWaiter?.resume(throwing: error)
        bodyWaiter?.resume(throwing: error)
        paused?.fail(error)
    }
}

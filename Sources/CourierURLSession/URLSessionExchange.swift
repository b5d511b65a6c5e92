import Courier
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One exchange on a `URLSessionTask`: the delegate's pushed callbacks turned into an awaitable
/// response head and a pulled body.
///
/// Response bytes arrive through `didReceive data` whether or not anyone is reading. Past
/// `bufferedResponseLimit` unread bytes the task is suspended on Apple platforms and resumed
/// once the reader has caught up. FoundationNetworking cannot pause a transfer (its
/// `_NativeProtocol` traps on a paused receive, and `suspend()` takes the handle off libcurl's
/// multi handle), so on Linux the buffer is not bounded: it holds as much as the reader is
/// behind the network.
///
/// The exchange ends once: with the response complete, with the error URLSession reports, or
/// with the error Courier stops it with (a cancel, or the session's deadline through that cancel);
/// whatever comes later is dropped.
final class URLSessionExchange: Sendable {
    private struct State {
        var head: ResponseHead?
        var headWaiter: CheckedContinuation<ResponseHead, any Error>?
        var chunks = CircularBuffer<ByteBuffer>(initialCapacity: 4)
        var bufferedBytes = 0
        var bodyWaiter: CheckedContinuation<ByteBuffer?, any Error>?
        var isFinished = false
        var failure: (any Error)?
        var bytesSent: Int64 = 0
        var bytesReceived: Int64 = 0
        /// Whether the recorder was told the whole body went out (so the head does not say it later).
        var sentRecorded = false
        var isSuspended = false
        var task: URLSessionTask?
    }

    private let state = NIOLockedValueBox(State())
    let url: URL
    private let uploadProgress: (@Sendable (Int64) -> Void)?
    /// Where the session wants this exchange's timings and byte counts; URLSession reports no
    /// metrics on Linux, so they come from the delegate callbacks as they happen.
    private let recorder: ExchangeRecorder?
    private let bufferedResponseLimit: Int
    /// Runs once the exchange has ended (a temporary body file to delete, a session to invalidate).
    private let cleanup: (@Sendable () -> Void)?

    init(
        url: URL, uploadProgress: (@Sendable (Int64) -> Void)?, recorder: ExchangeRecorder?,
        bufferedResponseLimit: Int, cleanup: (@Sendable () -> Void)?
    ) {
        self.url = url
        self.uploadProgress = uploadProgress
        self.recorder = recorder
        self.bufferedResponseLimit = bufferedResponseLimit
        self.cleanup = cleanup
    }

    /// True once the exchange ended, well or badly.
    var isComplete: Bool {
        state.withLockedValue { $0.isFinished || $0.failure != nil }
    }

    /// Remembers the task, so that stopping the exchange can cancel it.
    func attach(_ task: URLSessionTask) {
        state.withLockedValue { $0.task = task }
    }

    // MARK: Consumer side

    /// Waits for the response head; cancelling the calling task stops the exchange.
    /// - Throws: the ``CourierError`` that ended the exchange before its head.
    func head() async throws -> ResponseHead {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ResponseHead, any Error>) in
                let ready: Result<ResponseHead, any Error>? = state.withLockedValue { state in
                    if let head = state.head { return .success(head) }
                    if let failure = state.failure { return .failure(failure) }
                    state.headWaiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            self.stop(with: self.cancelledError())
        }
    }

    /// The next body chunk, or nil at the end; cancelling the calling task stops the exchange.
    /// - Throws: the ``CourierError`` that ended the exchange.
    func nextChunk() async throws -> ByteBuffer? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ByteBuffer?, any Error>) in
                let (ready, resumeTask) = state.withLockedValue {
                    state -> (Result<ByteBuffer?, any Error>?, URLSessionTask?) in
                    if let chunk = state.chunks.popFirst() {
                        state.bufferedBytes -= chunk.readableBytes
                        return (.success(chunk), takeTaskToResume(&state))
                    }
                    if let failure = state.failure { return (.failure(failure), nil) }
                    if state.isFinished { return (.success(nil), nil) }
                    state.bodyWaiter = continuation
                    return (nil, takeTaskToResume(&state))
                }
                resumeTask?.resume()
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            self.stop(with: self.cancelledError())
        }
    }

    /// The suspended task, when the reader has caught up enough to let it run again.
    private func takeTaskToResume(_ state: inout State) -> URLSessionTask? {
        guard state.isSuspended, state.bufferedBytes <= bufferedResponseLimit / 2 else { return nil }
        state.isSuspended = false
        return state.task
    }

    /// Stops the exchange with `error` unless it has already ended, and cancels its task.
    func stop(with error: CourierError) {
        let task = finish(failure: error, keepingChunks: false)
        // Off the caller's thread: FoundationNetworking's cancel waits on the session's work
        // queue, which must never hold a thread of Swift's cooperative pool (see `send`).
        if let task { URLSessionTransport.callQueue.async { task.cancel() } }
    }

    private func cancelledError() -> CourierError {
        CourierError(
            .cancelled, "the request to \(url.absoluteString) was cancelled", offendingInput: url.absoluteString)
    }

    // MARK: Producer side (the URLSession delegate)

    func didReceive(response: URLResponse) {
        guard let http = response as? HTTPURLResponse else { return }
        let head = URLSessionResponseHead.make(from: http, url: url)
        let (isFirst, waiter, sent) = state.withLockedValue {
            state -> (Bool, CheckedContinuation<ResponseHead, any Error>?, Int64?) in
            guard state.head == nil, state.failure == nil else { return (false, nil, nil) }
            state.head = head
            defer {
                state.headWaiter = nil
                state.sentRecorded = true
            }
            return (true, state.headWaiter, state.sentRecorded ? nil : state.bytesSent)
        }
        guard isFirst else { return }
        // URLSession says nothing of the head going out; a response means the request did.
        if let sent { recorder?.requestSent(bodyBytes: sent) }
        recorder?.responseHeadReceived()
        waiter?.resume(returning: head)
    }

    func didReceive(data: Data) {
        let buffer = ByteBuffer(data: data)
        let (waiter, suspend) = state.withLockedValue {
            state -> (CheckedContinuation<ByteBuffer?, any Error>?, URLSessionTask?) in
            guard !state.isFinished, state.failure == nil else { return (nil, nil) }
            state.bytesReceived += Int64(buffer.readableBytes)
            if let waiter = state.bodyWaiter {
                state.bodyWaiter = nil
                return (waiter, nil)
            }
            state.chunks.append(buffer)
            state.bufferedBytes += buffer.readableBytes
            guard URLSessionTransport.canPauseReceiving, !state.isSuspended,
                state.bufferedBytes > bufferedResponseLimit
            else { return (nil, nil) }
            state.isSuspended = true
            return (nil, state.task)
        }
        waiter?.resume(returning: buffer)
        if let suspend { URLSessionTransport.callQueue.async { suspend.suspend() } }
    }

    func didSend(totalBytes: Int64, expected: Int64) {
        guard uploadProgress != nil || recorder != nil else { return }
        let (advanced, complete) = state.withLockedValue { state -> (Int64?, Bool) in
            guard totalBytes > state.bytesSent else { return (nil, false) }
            state.bytesSent = totalBytes
            let complete = totalBytes == expected && !state.sentRecorded
            if complete { state.sentRecorded = true }
            return (totalBytes, complete)
        }
        guard let advanced else { return }
        uploadProgress?(advanced)
        if complete { recorder?.requestSent(bodyBytes: advanced) }
    }

    func didComplete(task: URLSessionTask, error: (any Error)?) {
        if let error {
            let failure = URLSessionErrors.courierError(from: error, url: url)
            _ = finish(failure: failure, keepingChunks: true)
        } else {
            // FoundationNetworking reports no response to the delegate for 301-308 answers that it
            // does not redirect (a 304, a 3xx without Location): take it from the task.
            if let response = task.response { didReceive(response: response) }
            _ = finish(failure: nil, keepingChunks: true)
        }
    }

    /// Ends the exchange (a failure, or the end of the body) unless it already ended, wakes every
    /// waiter, and returns the task, for the caller to cancel when Courier stops it.
    @discardableResult
    private func finish(failure: CourierError?, keepingChunks: Bool) -> URLSessionTask? {
        let (headWaiter, bodyWaiter, headFailure, task, ended) = state.withLockedValue { state in
            if state.isFinished || state.failure != nil {
                return (
                    CheckedContinuation<ResponseHead, any Error>?.none,
                    CheckedContinuation<ByteBuffer?, any Error>?.none, CourierError?.none, URLSessionTask?.none, false
                )
            }
            var headFailure: CourierError?
            if let failure {
                state.failure = failure
                if !keepingChunks {
                    state.chunks.removeAll()
                    state.bufferedBytes = 0
                }
            } else {
                state.isFinished = true
                if state.head == nil {
                    headFailure = CourierError(
                        .transportFailed, "URLSession ended the exchange with \(url.absoluteString) without a response",
                        offendingInput: url.absoluteString)
                    state.failure = headFailure
                }
            }
            defer {
                state.headWaiter = nil
                state.bodyWaiter = nil
                state.task = nil
            }
            if failure == nil, headFailure == nil, let recorder {
                // libcurl decodes compressed bodies before URLSession sees them: only an
                // unencoded body's count is the count on the wire.
                let encoded = state.head?.value(forHTTPHeaderField: "Content-Encoding") != nil
                recorder.responseBodyReceived(wireBytes: encoded ? nil : state.bytesReceived)
            }
            return (state.headWaiter, state.bodyWaiter, headFailure, state.task, true)
        }
        if let headWaiter { headWaiter.resume(throwing: failure ?? headFailure ?? cancelledError()) }
        if let bodyWaiter {
            if let failure {
                bodyWaiter.resume(throwing: failure)
            } else {
                bodyWaiter.resume(returning: nil)
            }
        }
        if ended { cleanup?() }
        return task
    }
}

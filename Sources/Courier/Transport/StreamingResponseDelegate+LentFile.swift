import AsyncHTTPClient
import NIOCore

/// A download's file lent to the event loop (``BodyFileSink``): parts are written into it as
/// they arrive, by whichever call holds the lend's `isWriting`, so that no two writes overlap
/// and none is out of order; the file goes back to the reader when it asks, when a write stalls
/// or fails, and when the response ends.
extension StreamingResponseDelegate {
    /// A file lent by the reader, and how to give it back.
    struct LentFile {
        let sink: BodyFileSink
        let waiter: UnsafeContinuation<Void, any Error>
        /// True while a write into it runs, outside the lock; parts that arrive meanwhile wait
        /// in `chunks` for the writer, which takes them next.
        var isWriting = true
        /// Set when the response ended during a write: the writer gives the file back after it.
        var mustReturn = false
    }

    /// Lends `sink` to the event loop: the parts waiting and those that arrive next are written
    /// into it there (see ``BodyFileSink``) until the response ends or fails, a write stalls, or
    /// the sink asks for the rest; then it is given back and ``nextBodyPart(onCancel:)`` yields
    /// whatever follows. Cancelling the calling task cancels the exchange.
    /// - Throws: ``CourierError`` `.downloadFailed` when a write failed; `task` is cancelled then.
    func writeRest(to sink: BodyFileSink, task: HTTPClient.Task<Void>) async throws {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (waiter: UnsafeContinuation<Void, any Error>) in
                // On the event loop, so that no part can arrive between the waiting ones and the
                // lend. The transport's loops (the process's singleton group) are never shut down.
                task.eventLoop.execute { self.lend(sink, waiter: waiter, task: task) }
            }
        } onCancel: {
            self.noteCancelledByCourier()
            task.cancel()
        }
    }

    private func lend(_ sink: BodyFileSink, waiter: UnsafeContinuation<Void, any Error>, task: HTTPClient.Task<Void>) {
        let waiting: CircularBuffer<ByteBuffer>? = state.withLockedValue { state in
            // An ended response keeps its parts for the reader, which writes them itself.
            guard !state.isFinished, state.failure == nil else { return nil }
            state.lentFile = LentFile(sink: sink, waiter: waiter)
            defer {
                state.chunks.removeAll(keepingCapacity: true)
                state.bufferedBytes = 0
            }
            return state.chunks
        }
        guard let waiting else { return waiter.resume() }
        writeLent(waiting, into: sink, task: task)
    }

    /// Writes `parts`, and any that arrive meanwhile, into the lent file (whose `isWriting` the
    /// caller set); then keeps it lent, or gives it back with the parts not written put back
    /// in front of `chunks`.
    func writeLent(_ parts: CircularBuffer<ByteBuffer>, into sink: BodyFileSink, task: HTTPClient.Task<Void>) {
        enum Next {
            case write(CircularBuffer<ByteBuffer>)
            case stay(EventLoopPromise<Void>?)
            case giveBack(UnsafeContinuation<Void, any Error>?, EventLoopPromise<Void>?)
        }
        var parts = parts
        // One turn of the event loop writes for at most the sink's limit (and one write): the
        // parts that waited for a lend can be many.
        let turnStarted = NIODeadline.now()
        while true {
            var keepsFile = true
            var writeError: (any Error)?
            while keepsFile, let part = parts.popFirst() {
                do {
                    keepsFile = try sink.write(part, turnStarted: turnStarted)
                } catch {
                    writeError = error
                    keepsFile = false
                }
            }
            let wroteUntil = NIODeadline.now()
            let next: Next = state.withLockedValue { state in
                // The loop could not read while it wrote: the idle read timeout counts from now.
                state.lastResponsePart = max(state.lastResponsePart, wroteUntil)
                guard var lent = state.lentFile else { return .giveBack(nil, nil) }
                if keepsFile, !lent.mustReturn, !state.chunks.isEmpty {
                    defer {
                        state.chunks.removeAll(keepingCapacity: true)
                        state.bufferedBytes = 0
                    }
                    return .write(state.chunks)
                }
                if keepsFile, !lent.mustReturn {
                    lent.isWriting = false
                    state.lentFile = lent
                } else {
                    state.lentFile = nil
                    if writeError == nil {
                        while let part = parts.popLast() {
                            state.chunks.prepend(part)
                            state.bufferedBytes += part.readableBytes
                        }
                    }
                }
                let resumed = state.bufferedBytes < state.bufferedByteLimit ? state.pausedProducer : nil
                if resumed != nil { state.pausedProducer = nil }
                return state.lentFile == nil ? .giveBack(lent.waiter, resumed) : .stay(resumed)
            }
            switch next {
            case .write(let more):
                parts = more
                continue
            case .stay(let resumed):
                resumed?.succeed(())
            case .giveBack(let waiter, let resumed):
                if let writeError {
                    noteCancelledByCourier()
                    task.cancel()
                    // A socket paused for the read-ahead must hear of it: AsyncHTTPClient, having
                    // read the end already, waits on this promise before it ends the exchange.
                    resumed?.fail(writeError)
                    waiter?.resume(throwing: writeError)
                } else {
                    resumed?.succeed(())
                    waiter?.resume()
                }
            }
            return
        }
    }

    /// Ends a lend because the response ended: the waiter when the file can be given back now,
    /// nil when a write is under way (its writer gives the file back) or nothing was lent.
    static func endLend(_ state: inout State) -> UnsafeContinuation<Void, any Error>? {
        guard var lent = state.lentFile else { return nil }
        if lent.isWriting {
            lent.mustReturn = true
            state.lentFile = lent
            return nil
        }
        state.lentFile = nil
        return lent.waiter
    }
}

import NIOCore
import NIOHTTP1

/// One response as AsyncHTTPClient hands it over and a reader takes it: the head, the body parts
/// held for a reader that falls behind, the socket paused when too many wait, a download's file
/// handed over to the event loop, and the end or the failure.
///
/// Each state holds what is valid in it, and each event is a transition that returns what the
/// caller must do outside the lock (resume a waiter, complete a promise); the machine itself
/// touches no event loop and no continuation, so it is tested with plain values. The waiters are
/// type parameters for that reason: continuations in `StreamingResponseDelegate`, tokens in the tests.
struct ResponseStreamStateMachine<HeadWaiter, BodyWaiter, FileWriter> {
    /// Held body parts and their size.
    struct Held {
        /// The oldest part held, kept inline: a small response that waits for its reader waits as
        /// one part, which then costs no buffer of its own. Nil only when nothing is held.
        private var first: ByteBuffer?
        /// The parts after `first`, in order; made when a second part waits.
        private var rest: CircularBuffer<ByteBuffer>?
        private(set) var bytes = 0

        var isEmpty: Bool { first == nil }

        mutating func take() -> ByteBuffer? {
            guard let part = first else { return nil }
            first = rest?.popFirst()
            bytes -= part.readableBytes
            return part
        }

        mutating func append(_ part: ByteBuffer) {
            bytes += part.readableBytes
            guard first != nil else {
                first = part
                return
            }
            if rest == nil { rest = CircularBuffer(initialCapacity: 4) }
            rest?.append(part)
        }

        mutating func prepend(_ unwritten: CircularBuffer<ByteBuffer>) {
            let after = takeAll()
            for part in unwritten { append(part) }
            for part in after { append(part) }
        }

        mutating func takeAll() -> CircularBuffer<ByteBuffer> {
            var all = rest ?? CircularBuffer(initialCapacity: 4)
            if let first { all.prepend(first) }
            first = nil
            rest = nil
            bytes = 0
            return all
        }
    }

    /// After the head: the parts, who waits for the next one, the paused socket, the file.
    struct Streaming {
        var held: Held
        var bodyWaiter: BodyWaiter?
        var pausedSocket: EventLoopPromise<Void>?
        /// The download's file while the event loop writes into it; `isWriting` while a write runs
        /// outside the lock (parts that arrive meanwhile are held for it).
        var file: (writer: FileWriter, isWriting: Bool)?

        /// The paused socket, taken to be resumed, once the held bytes are below `limit`.
        mutating func resumable(under limit: Int) -> EventLoopPromise<Void>? {
            guard held.bytes < limit, let paused = pausedSocket else { return nil }
            pausedSocket = nil
            return paused
        }
    }

    enum State {
        case awaitingHead(waiter: HeadWaiter?)
        case streaming(HTTPResponseHead, Streaming)
        /// Ended, well (the head) or badly (the error); the parts not read yet are still the
        /// reader's, before the error. `writing` is the file's writer when the end came during a
        /// write: it hands the file back after it.
        case ended(Held, Result<HTTPResponseHead, any Error>, writing: FileWriter?)
    }

    private(set) var state: State
    /// Bytes held before reads from the socket pause, whatever the state until the end; at least
    /// 1, so that a paused socket always has a part whose taking resumes it. Only ever raised.
    private var limit: Int

    init(bufferedByteLimit: Int) {
        state = .awaitingHead(waiter: nil)
        limit = max(1, bufferedByteLimit)
    }

    /// Moves the state out for a transition, which puts the next one back before it returns.
    /// Matching `state` where it is stored copies its whole payload first (an outlined copy per
    /// event), and the held parts' buffer again at its first change (copy-on-write: the state
    /// still shared it); moved out, the payload has one owner and changes in place.
    private mutating func takeState() -> State {
        var taken = State.awaitingHead(waiter: nil)
        swap(&taken, &state)
        return taken
    }

    /// True once the response ended, well or badly. A case matched without bindings is read
    /// where the state is stored, with no copy; moving the state out (``takeState()``) would
    /// leave a placeholder to destroy through the generic enum's value witness.
    mutating func isComplete() -> Bool {
        switch state {
        case .ended: true
        case .awaitingHead, .streaming: false
        }
    }

    /// True while the socket is paused for a reader that fell behind.
    var isHoldingSocket: Bool {
        if case .streaming(_, let streaming) = state { return streaming.pausedSocket != nil }
        return false
    }

    // MARK: The reader

    /// The head, the error that ended the exchange, or nil when `waiter` must wait (kept).
    mutating func waitForHead(_ waiter: HeadWaiter) -> Result<HTTPResponseHead, any Error>? {
        let taken = takeState()
        switch taken {
        case .awaitingHead:
            state = .awaitingHead(waiter: waiter)
            return nil
        case .streaming(let head, _):
            state = taken
            return .success(head)
        case .ended(_, let outcome, _):
            state = taken
            return outcome
        }
    }

    enum Take {
        /// A part, and the paused socket to resume because the held bytes fell below the limit;
        /// `isLast` for the last part of a response that ended well, whose reader need not ask
        /// again for the end.
        case part(ByteBuffer, resume: EventLoopPromise<Void>?, isLast: Bool)
        case end
        case failure(any Error)
        /// Nothing yet: the waiter was kept (or, without one, the caller must come back with one).
        case wait
    }

    /// The next part for the reader; with `waiter`, kept when nothing is there yet.
    mutating func takePart(waiter: BodyWaiter? = nil) -> Take {
        switch takeState() {
        case .awaitingHead(let headWaiter):
            state = .awaitingHead(waiter: headWaiter)
            return .wait
        case .streaming(let head, var streaming):
            if let part = streaming.held.take() {
                let resumed = streaming.resumable(under: limit)
                state = .streaming(head, streaming)
                return .part(part, resume: resumed, isLast: false)
            }
            if let waiter { streaming.bodyWaiter = waiter }
            state = .streaming(head, streaming)
            return .wait
        case .ended(var held, let outcome, let writing):
            let part = held.take()
            state = .ended(held, outcome, writing: writing)
            switch (part, outcome) {
            case (nil, .success): return .end
            case (nil, .failure(let error)): return .failure(error)
            case (let part?, .success): return .part(part, resume: nil, isLast: held.isEmpty)
            case (let part?, .failure): return .part(part, resume: nil, isLast: false)
            }
        }
    }

    /// Lets up to `limit` bytes wait from now on; the paused socket to resume, if it may read again.
    /// A limit at or below the current one changes nothing (a file's hand-over keeps the socket
    /// paused until its writes are done, whatever is held).
    mutating func raiseLimit(to limit: Int) -> EventLoopPromise<Void>? {
        guard limit > self.limit else { return nil }
        self.limit = limit
        guard case .streaming(let head, var streaming) = state else { return nil }
        let resumed = streaming.resumable(under: self.limit)
        state = .streaming(head, streaming)
        return resumed
    }

    /// Hands the file to the event loop: the parts held now, for `writer` to write, or nil when the
    /// response already ended (the reader keeps its parts and writes them itself).
    mutating func handOverFile(_ writer: FileWriter) -> CircularBuffer<ByteBuffer>? {
        guard case .streaming(let head, var streaming) = state else { return nil }
        streaming.file = (writer, isWriting: true)
        let parts = streaming.held.takeAll()
        state = .streaming(head, streaming)
        return parts
    }

    enum AfterWrite {
        /// More parts arrived during the write: write them too.
        case write(CircularBuffer<ByteBuffer>)
        /// The turn is over: hand the file back to `writer`'s task (nil when the file stays with
        /// the event loop, or the end already handed it back); resume or fail the paused socket.
        case done(handBack: FileWriter?, resume: EventLoopPromise<Void>?)
    }

    /// A turn of writes ended: `keepsFile` is false when the file must go back (the session or the
    /// stall limit said so, or `failed`), `unwritten` the parts the turn did not write, which go
    /// back in front of the held ones unless the write failed.
    mutating func wroteParts(keepsFile: Bool, failed: Bool, unwritten: CircularBuffer<ByteBuffer>) -> AfterWrite {
        if case .ended(var held, let outcome, .some(let writer)) = state {
            if !failed { held.prepend(unwritten) }
            state = .ended(held, outcome, writing: nil)
            return .done(handBack: writer, resume: nil)
        }
        guard case .streaming(let head, var streaming) = state, let file = streaming.file else {
            return .done(handBack: nil, resume: nil)
        }
        if keepsFile, !streaming.held.isEmpty {
            let more = streaming.held.takeAll()
            state = .streaming(head, streaming)
            return .write(more)
        }
        if !keepsFile, !failed { streaming.held.prepend(unwritten) }
        streaming.file = keepsFile ? (writer: file.writer, isWriting: false) : nil
        let resumed = streaming.resumable(under: limit)
        state = .streaming(head, streaming)
        return .done(handBack: keepsFile ? nil : file.writer, resume: resumed)
    }

    // MARK: AsyncHTTPClient, on the event loop

    /// The head arrived; the reader waiting for it, to wake.
    mutating func receivedHead(_ head: HTTPResponseHead) -> HeadWaiter? {
        switch takeState() {
        case .awaitingHead(let waiter):
            state = .streaming(head, Streaming(held: Held()))
            return waiter
        case let other:
            state = other
            return nil
        }
    }

    enum Arrival {
        /// Hand the part to the waiting reader.
        case deliver(BodyWaiter)
        /// Read on: the part is held for the reader, or dropped when the response already ended
        /// (a cancel raced it).
        case readOn
        /// Held, and the limit reached: AsyncHTTPClient waits on this promise before it reads on.
        case pause(EventLoopPromise<Void>)
        /// Write it into the handed-over file (whose writer is now busy).
        case write(FileWriter)
    }

    /// A body part arrived; `makePromise` makes the promise a paused socket waits on.
    mutating func receivedPart(_ part: ByteBuffer, makePromise: () -> EventLoopPromise<Void>) -> Arrival {
        switch takeState() {
        case .streaming(let head, var streaming):
            defer { state = .streaming(head, streaming) }
            if let file = streaming.file, !file.isWriting {
                streaming.file = (file.writer, isWriting: true)
                return .write(file.writer)
            }
            if let waiter = streaming.bodyWaiter {
                streaming.bodyWaiter = nil
                return .deliver(waiter)
            }
            streaming.held.append(Self.compacted(part))
            guard streaming.held.bytes >= limit else { return .readOn }
            let promise = makePromise()
            streaming.pausedSocket = promise
            return .pause(promise)
        case let other:
            state = other
            return .readOn
        }
    }

    /// Whom to wake when the response ends, and with what.
    struct Ending {
        /// The error that ended the response; nil when it ended well.
        var error: (any Error)?
        var headWaiter: HeadWaiter?
        var bodyWaiter: BodyWaiter?
        var pausedSocket: EventLoopPromise<Void>?
        /// The file to hand back now; nil when none was handed over, or a write is under way
        /// (its writer hands the file back).
        var fileWriter: FileWriter?
    }

    /// The response ended, with `failure` or well (nil); nil when it had already ended. An end
    /// before any head is a failure, with `headless` unless `failure` says otherwise (the
    /// connection closed before the response), made only then: boxing an error costs an
    /// allocation on every response otherwise. Held parts stay the reader's (before the error)
    /// only when `keepingHeldParts`.
    mutating func end(
        failure: (any Error)?, keepingHeldParts: Bool, headless: @autoclosure () -> any Error
    ) -> Ending? {
        switch takeState() {
        case .awaitingHead(let waiter):
            let error = failure ?? headless()
            state = .ended(Held(), .failure(error), writing: nil)
            return Ending(error: error, headWaiter: waiter)
        case .streaming(let head, let streaming):
            let writing = streaming.file?.isWriting == true ? streaming.file?.writer : nil
            state = .ended(
                keepingHeldParts ? streaming.held : Held(), failure.map { .failure($0) } ?? .success(head),
                writing: writing)
            return Ending(
                error: failure, bodyWaiter: streaming.bodyWaiter, pausedSocket: streaming.pausedSocket,
                fileWriter: writing == nil ? streaming.file?.writer : nil)
        case let ended:
            state = ended
            return nil
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
}

extension ResponseStreamStateMachine: Sendable where HeadWaiter: Sendable, BodyWaiter: Sendable, FileWriter: Sendable {}
extension ResponseStreamStateMachine.State: Sendable
where HeadWaiter: Sendable, BodyWaiter: Sendable, FileWriter: Sendable {}
extension ResponseStreamStateMachine.Streaming: Sendable
where HeadWaiter: Sendable, BodyWaiter: Sendable, FileWriter: Sendable {}
extension ResponseStreamStateMachine.Held: Sendable {}

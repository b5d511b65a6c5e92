import NIOCore
import NIOHTTP1

extension HTTP2StreamGuard {
    /// What the guard keeps of a stream's exchange, and what it does with each event: the
    /// handler (``HTTP2StreamGuard``) runs the actions it returns.
    struct StateMachine {
        enum State {
            /// No body is going out (before the request head, a request without a body, after the
            /// body ended, or after the handler failed the exchange itself): nothing to keep.
            case passing
            /// The body is going out and no final response head has come; `writerStarted` says
            /// whether the handler has told the request bag's writer to produce.
            case uploading(writerStarted: Bool)
            /// A 2xx head came before the writer started: it and what followed, held;
            /// `readPending` says the handler asked for a read that was not passed on.
            case holdingHead([HTTPClientResponsePart], readPending: Bool)
            /// A final head was passed on while the body is going out; `awaitingBytes` mirrors the
            /// handler's wait for bytes (a read asked for since its last read-complete).
            case answering(status: UInt, awaitingBytes: Bool)
            /// A whole 2xx response arrived while the body is going out; its end is held. `cut` is
            /// the error or close that ended the stream meanwhile, if any.
            case answered(trailers: HTTPHeaders?, awaitingBytes: Bool, cut: (any Error)?)
            /// The guard handed over an end while the body was unfinished, or failed the exchange (a
            /// status code below 100): the handler has dropped its request, and sees nothing more.
            case finished
        }

        enum ReadAction {
            case forward, drop
            /// Fail the exchange with ``InvalidResponseStatus`` and close the stream.
            case refuse(UInt)
            /// A 3xx-5xx answer ended while the body is going out.
            case deliverEndAndClose(HTTPHeaders?)
        }

        enum WritabilityAction {
            case forward, drop
            /// Forward, then fire the held parts.
            case forwardAndRelease([HTTPClientResponsePart], readPending: Bool)
        }

        enum EndAction {
            case none
            /// Forward the error, or the close.
            case forward
            case deliverEnd(HTTPHeaders?)
            /// Fail the exchange on a later turn of the loop unless the handler asks for the end.
            case giveUpLater
            /// Fire the held parts, then take the end again.
            case release([HTTPClientResponsePart])
        }

        enum ReadRequestAction {
            case pass, hold
            case deliverEnd(HTTPHeaders?)
        }

        private var state = State.passing
        /// What the handler last saw of the stream's writability (from the events it was given).
        var handlerSeesWritable = false

        mutating func read(_ part: HTTPClientResponsePart) -> ReadAction {
            switch state {
            case .finished, .answered:
                // Nothing follows a response's end on its stream.
                return .drop
            case .holdingHead(var held, let readPending):
                state = .passing  // held stays the array's only owner: no copy
                held.append(part)
                state = .holdingHead(held, readPending: readPending)
                return .drop
            case .passing, .uploading, .answering:
                break
            }
            if case .head(let head) = part, head.status.code < 100 {
                // Finished, as after a 3xx-5xx end: the handler fails its request on the refusal,
                // and a failed request of AsyncHTTPClient's ignores what the stream does next.
                state = .finished
                return .refuse(head.status.code)
            }
            switch (state, part) {
            // A head AsyncHTTPClient takes as the response's (it skips other 1xx heads).
            case (.uploading(let writerStarted), .head(let head))
            where head.status.code >= 200 || head.status == .switchingProtocols:
                if head.status.code < 300, !writerStarted {
                    state = .holdingHead([part], readPending: false)
                    return .drop
                }
                state = .answering(status: head.status.code, awaitingBytes: true)
            case (.answering(let status, let awaitingBytes), .end(let trailers)):
                guard status >= 300 else {
                    state = .answered(trailers: trailers, awaitingBytes: awaitingBytes, cut: nil)
                    return .drop
                }
                // The handler ends a 3xx-5xx exchange itself and never resumes its body; the
                // empty part lets the request bag finish, and the close stops the upload.
                state = .finished
                return .deliverEndAndClose(trailers)
            default:
                break
            }
            return .forward
        }

        /// Whether the read-complete reaches the handler.
        mutating func readComplete() -> Bool {
            switch state {
            case .answering(let status, _):
                state = .answering(status: status, awaitingBytes: false)
            case .answered, .finished:
                // A held end keeps the handler waiting for bytes, as it was when the end arrived.
                return false
            default:
                break
            }
            return true
        }

        mutating func writabilityChanged(_ writable: Bool) -> WritabilityAction {
            if case .finished = state { return .drop }
            handlerSeesWritable = writable
            guard writable else { return .forward }
            // The handler resumes a paused body when the stream turns writable, which starts the
            // writer the first time (unless a 3xx-5xx answer already stopped the upload).
            switch state {
            case .uploading(writerStarted: false):
                state = .uploading(writerStarted: true)
            case .holdingHead(let held, let readPending):
                state = .uploading(writerStarted: true)
                return .forwardAndRelease(held, readPending: readPending)
            default:
                break
            }
            return .forward
        }

        /// An error on the stream, or its close (`error` nil).
        mutating func streamEnded(_ error: (any Error)?) -> EndAction {
            switch state {
            case .finished:
                return .none
            case .answered(let trailers, true, _):
                state = .finished
                return .deliverEnd(trailers)
            case .answered(let trailers, false, nil):
                state = .answered(
                    trailers: trailers, awaitingBytes: false, cut: error ?? ChannelError.ioOnClosedChannel)
                return .giveUpLater
            case .answered:
                return .none
            case .holdingHead(let held, _):
                state = .uploading(writerStarted: true)
                return .release(held)
            case .passing, .uploading, .answering:
                return .forward
            }
        }

        /// The stream was torn down before the handler asked for the held end: the error to fail
        /// the exchange with, if that is still so.
        mutating func giveUp() -> HTTP2EarlyAnswerCut? {
            guard case .answered(_, false, let cut?) = state else { return nil }
            state = .passing
            return HTTP2EarlyAnswerCut(cause: cut)
        }

        /// A request part on its way out; the held response end to hand the handler once the
        /// part has been passed on, when it is the body's end.
        mutating func write(_ part: HTTPClientRequestPart) -> HTTPHeaders?? {
            switch (part, state) {
            case (_, .finished), (.body, _):
                return nil
            case (.head, _):
                // Until an end follows (at once for a request without a body).
                state = .uploading(writerStarted: false)
            case (.end, .answered(let trailers, _, _)):
                state = .passing
                return .some(trailers)
            case (.end, _):
                state = .passing
            }
            return nil
        }

        /// A flush: the handler decides whether to start the body's writer right after the head
        /// goes out, from the writability it has seen.
        mutating func flushed() {
            if case .uploading(writerStarted: false) = state, handlerSeesWritable {
                state = .uploading(writerStarted: true)
            }
        }

        /// The handler asks for bytes.
        mutating func handlerRead() -> ReadRequestAction {
            switch state {
            case .holdingHead(let held, _):
                state = .holdingHead(held, readPending: true)
                return .hold
            case .answering(let status, _):
                state = .answering(status: status, awaitingBytes: true)
            case .answered(let trailers, _, nil):
                state = .answered(trailers: trailers, awaitingBytes: true, cut: nil)
            case .answered(let trailers, _, _?):
                state = .finished
                return .deliverEnd(trailers)
            default:
                break
            }
            return .pass
        }

        /// The handler closes the stream: it failed or ended the exchange itself and has its
        /// request no more; nothing held is owed to it.
        mutating func handlerClosed() {
            if case .finished = state { return }
            state = .passing
        }
    }
}

import Courier
import NIOCore

/// `--chunked`: the same bytes as a body of unknown length, so the transport sends them with
/// `Transfer-Encoding: chunked`. Stays replayable when the original is, for 307/308 redirects.
enum ChunkedBody {
    /// `body` with its length hidden; an empty body stays empty.
    static func wrapping(_ body: RequestBody) -> RequestBody {
        guard !body.isEmpty else { return body }
        if body.isReplayable {
            return .stream(length: nil) { DeferredChunks(body: body) }
        }
        return .oneShotStream(length: nil, DeferredChunks(body: body))
    }

    /// Calls `makeChunks()` on the first `next()`, so that its error surfaces while sending.
    struct DeferredChunks: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let body: RequestBody

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(body: body) }

        struct AsyncIterator: AsyncIteratorProtocol {
            let body: RequestBody
            var inner: BodyChunks.AsyncIterator?

            mutating func next() async throws -> ByteBuffer? {
                if inner == nil { inner = try body.makeChunks().makeAsyncIterator() }
                return try await inner?.next()
            }
        }
    }
}

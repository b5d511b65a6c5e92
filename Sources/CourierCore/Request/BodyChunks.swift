import Foundation
import NIOCore

/// A type-erased asynchronous sequence of body bytes, as ``RequestBody/makeChunks()`` returns.
///
/// Erasure keeps the transport independent of how a body is produced; the cost is one
/// closure call per chunk, and chunks are large (file reads are a mebibyte).
public struct BodyChunks: AsyncSequence, Sendable {
    public typealias Element = ByteBuffer

    private let makeIteratorClosure: @Sendable () -> AsyncIterator
    /// Set by a transport whose body can write itself into a download's file on the thread that
    /// reads the connection (``ResponseBodyFileWriter``); nil for any other body, and lost by any
    /// wrapper (a decoder), since the bytes on the wire are then not the bytes to write.
    public var fileWriter: (any ResponseBodyFileWriter)?

    /// Erases `sequence`.
    public init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == ByteBuffer {
        self.makeIteratorClosure = {
            var iterator = sequence.makeAsyncIterator()
            return AsyncIterator { try await iterator.next() }
        }
    }

    /// Wraps a closure that returns the next chunk, or nil at the end.
    public init(makeNext: @escaping @Sendable () -> (() async throws -> ByteBuffer?)) {
        self.makeIteratorClosure = { AsyncIterator(next: makeNext()) }
    }

    /// Wraps a closure that makes each iterator, and the body's file writer if it has one; one
    /// closure fewer per body than ``init(makeNext:)``, for transports that make a body per response.
    public init(
        makeIterator: @escaping @Sendable () -> AsyncIterator, fileWriter: (any ResponseBodyFileWriter)? = nil
    ) {
        self.makeIteratorClosure = makeIterator
        self.fileWriter = fileWriter
    }

    public func makeAsyncIterator() -> AsyncIterator { makeIteratorClosure() }

    /// The iterator; not shared between tasks.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let nextClosure: () async throws -> ByteBuffer?

        /// An iterator that calls `next` for each chunk; nil ends the body.
        public init(next: @escaping () async throws -> ByteBuffer?) { self.nextClosure = next }

        public mutating func next() async throws -> ByteBuffer? { try await nextClosure() }
    }
}

struct EmptyChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    struct AsyncIterator: AsyncIteratorProtocol {
        mutating func next() async throws -> ByteBuffer? { nil }
    }
    func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }
}

struct SingleChunk: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let buffer: ByteBuffer
    struct AsyncIterator: AsyncIteratorProtocol {
        var buffer: ByteBuffer?
        mutating func next() async throws -> ByteBuffer? {
            defer { buffer = nil }
            return buffer
        }
    }
    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(buffer: buffer.readableBytes == 0 ? nil : buffer) }
}

/// A stream body, replayable or one-shot, whose length is checked as it is read.
final class StreamBodySource: RequestBodySource, @unchecked Sendable {
    let contentLength: Int64?
    let isReplayable: Bool
    private let make: @Sendable () -> BodyChunks
    // Guards `consumed`; only touched in makeChunks().
    private let lock = NSLock()
    private var consumed = false

    init(length: Int64?, replayable: Bool, make: @escaping @Sendable () -> BodyChunks) {
        self.contentLength = length
        self.isReplayable = replayable
        self.make = make
    }

    func makeChunks() throws -> BodyChunks {
        if !isReplayable {
            let wasConsumed = lock.withLock { () -> Bool in
                defer { consumed = true }
                return consumed
            }
            if wasConsumed {
                throw CourierError(
                    .bodyNotReplayable, "the request body is a one-shot stream and was already sent once")
            }
        }
        return LengthCheckedChunks.wrap(make(), expected: contentLength)
    }
}

/// Fails a sequence that yields more or fewer bytes than it declared.
enum LengthCheckedChunks {
    static func wrap(_ chunks: BodyChunks, expected: Int64?) -> BodyChunks {
        guard let expected else { return chunks }
        return BodyChunks(makeNext: {
            var iterator = chunks.makeAsyncIterator()
            var seen: Int64 = 0
            return {
                guard let chunk = try await iterator.next() else {
                    if seen != expected {
                        throw CourierError(
                            .bodyLengthMismatch, "the body stream ended after \(seen) of \(expected) declared bytes")
                    }
                    return nil
                }
                seen += Int64(chunk.readableBytes)
                if seen > expected {
                    throw CourierError(
                        .bodyLengthMismatch, "the body stream yielded more than its \(expected) declared bytes")
                }
                return chunk
            }
        })
    }
}

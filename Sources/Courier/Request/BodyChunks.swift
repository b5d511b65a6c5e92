import Foundation
import NIOCore

/// A type-erased asynchronous sequence of body bytes, as ``RequestBody/makeChunks()`` returns.
///
/// Erasure keeps the transport independent of how a body is produced; the cost is one
/// closure call per chunk, and chunks are large (file reads are a mebibyte).
public struct BodyChunks: AsyncSequence, Sendable {
    public typealias Element = ByteBuffer

    private let makeIteratorClosure: @Sendable () -> AsyncIterator

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

    /// Wraps a closure that makes each iterator; one closure fewer per body than
    /// ``init(makeNext:)``, for transports that make a body per response.
    init(makeIterator: @escaping @Sendable () -> AsyncIterator) {
        self.makeIteratorClosure = makeIterator
    }

    public func makeAsyncIterator() -> AsyncIterator { makeIteratorClosure() }

    /// The iterator; not shared between tasks.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let nextClosure: () async throws -> ByteBuffer?

        init(next: @escaping () async throws -> ByteBuffer?) { self.nextClosure = next }

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

/// Reads a region of a file in large chunks, failing if the file holds fewer bytes than declared.
///
/// Reads go into a small ring of reused buffers rather than a fresh mebibyte per chunk: a
/// buffer handed out earlier is read into again only once its consumer has let go of it
/// (`ByteBuffer.clear()` keeps the storage when it is the only reference, and allocates a fresh
/// one when the socket still holds it), so a steady upload allocates nothing per chunk and
/// memory stays at a few chunks.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    static let chunkSize = 1 << 20
    /// Buffers in the ring: one being written by the connection, one queued, one being read.
    static let ringSize = 3

    let path: String
    let offset: Int64
    let length: Int64
    /// Whether a file longer than the region at the end of the read is an error: true when the
    /// region was declared to run to the end of the file (a whole file, a multipart file part).
    var checksGrowth = true

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(path: path, offset: offset, remaining: length, checksGrowth: checksGrowth)
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let path: String
        var offset: Int64
        var remaining: Int64
        var reader: FileReader?
        var ring: [ByteBuffer?] = []
        var ringIndex = 0
        let checksGrowth: Bool

        init(path: String, offset: Int64, remaining: Int64, checksGrowth: Bool) {
            self.path = path
            self.offset = offset
            self.remaining = remaining
            self.checksGrowth = checksGrowth
        }

        mutating func next() async throws -> ByteBuffer? {
            if remaining == 0 {
                if let reader, checksGrowth { try reader.checkAtEnd(offset: offset) }
                reader = nil
                return nil
            }
            let fileReader = try reader ?? FileReader(path: path)
            reader = fileReader
            let count = Int(Swift.min(remaining, Int64(FileChunks.chunkSize)))
            var buffer = takeBuffer(capacity: count)
            let read = try fileReader.read(into: &buffer, count: count, at: offset)
            ring[ringIndex] = buffer
            ringIndex = (ringIndex + 1) % FileChunks.ringSize
            if read == 0 {
                throw CourierError(
                    .bodyLengthMismatch, "\(path) ended \(remaining) bytes early: it shrank after it was added",
                    offendingInput: path)
            }
            offset += Int64(read)
            remaining -= Int64(read)
            return buffer
        }

        /// The next ring buffer, emptied; its storage is reused when nobody else holds it.
        private mutating func takeBuffer(capacity: Int) -> ByteBuffer {
            if ring.isEmpty { ring = Array(repeating: nil, count: FileChunks.ringSize) }
            // Take the ring's reference out first so that an unshared buffer is uniquely held here.
            guard var buffer = ring[ringIndex].take() else {
                return ByteBufferAllocator().buffer(capacity: capacity)
            }
            buffer.clear(minimumCapacity: capacity)
            return buffer
        }
    }
}

/// An open file descriptor, closed when the reader goes away.
final class FileReader {
    let path: String
    private let descriptor: Int32

    /// - Throws: ``CourierError`` `.invalidFile` when the file cannot be opened.
    init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw CourierError(
                .invalidFile, "cannot open \(path): \(String(cString: strerror(code)))", offendingInput: path,
                underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
        }
        self.descriptor = fd
    }

    deinit { close(descriptor) }

    /// Reads up to `count` bytes at `offset`, appending to `buffer`; 0 at end of file.
    /// - Throws: ``CourierError`` `.invalidFile` on a read error.
    func read(into buffer: inout ByteBuffer, count: Int, at offset: Int64) throws -> Int {
        try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
            try read(into: UnsafeMutableRawBufferPointer(rebasing: pointer.prefix(count)), at: offset)
        }
    }

    /// Reads up to `pointer.count` bytes at `offset` straight into caller memory; 0 at end of file.
    /// - Throws: ``CourierError`` `.invalidFile` on a read error.
    func read(into pointer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        while true {
            let result = pread(descriptor, pointer.baseAddress, pointer.count, off_t(offset))
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw CourierError(
                .invalidFile, "cannot read \(path): \(String(cString: strerror(code)))", offendingInput: path,
                underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
        }
    }

    /// Fails when the file has grown beyond `offset`, which would mean the declared length is stale.
    /// - Throws: ``CourierError`` `.bodyLengthMismatch`.
    func checkAtEnd(offset: Int64) throws {
        var info = stat()
        if fstat(descriptor, &info) == 0, Int64(info.st_size) > offset {
            throw CourierError(
                .bodyLengthMismatch, "\(path) grew after it was added: it now has \(info.st_size) bytes",
                offendingInput: path)
        }
    }
}

/// Facts about a file, read once when it is added to a body.
struct FileInfo: Sendable {
    let path: String
    let size: Int64

    /// - Throws: ``CourierError`` `.invalidFile` for a URL that is not a file URL, a missing file,
    ///   a directory or other non-regular file, or one that cannot be read.
    init(url: URL) throws {
        guard url.isFileURL else {
            throw CourierError(
                .invalidFile, "\(url.absoluteString) is not a file URL", offendingInput: url.absoluteString)
        }
        let path = url.path
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            throw CourierError(
                .invalidFile, "cannot read \(path): \(String(cString: strerror(code)))", offendingInput: path,
                underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            let kind = (info.st_mode & S_IFMT) == S_IFDIR ? "a directory" : "not a regular file"
            throw CourierError(.invalidFile, "\(path) is \(kind)", offendingInput: path)
        }
        guard access(path, R_OK) == 0 else {
            throw CourierError(.invalidFile, "\(path) is not readable", offendingInput: path)
        }
        self.path = path
        self.size = Int64(info.st_size)
    }
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

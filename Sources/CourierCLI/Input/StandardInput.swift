import Courier
import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A request body piped on stdin, as httpie takes one when stdin is not a terminal, but
/// never read whole into memory.
///
/// - A regular file (`courier POST URL < big.iso`) is sent from where stdin stands to its end,
///   with Content-Length and sendfile, reopened through `/proc/self/fd/0`; replayable, so a
///   307/308 redirect resends it.
/// - Anything else (a pipe, a socket, a device) is read once in ``chunkSize`` pieces: when it
///   ends within the first piece the body is those bytes (with Content-Length, as before);
///   otherwise it streams chunked, a piece at a time, as the transport asks for it. It is
///   one-shot: a redirect that must resend it fails with `.bodyNotReplayable`.
///
/// Memory stays at a piece or two whatever the size.
enum StandardInput {
    /// Bytes read per `read(2)`.
    static let chunkSize = 256 << 10

    /// The body stdin holds, or nil when it is empty or was closed when the process started
    /// (``StandardDescriptors``).
    /// - Throws: ``CLIError`` when stdin cannot be read.
    static func body() throws -> RequestBody? {
        if StandardDescriptors.stdinWasClosed { return nil }
        var info = stat()
        if fstat(0, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
            let offset = max(0, Int64(lseek(0, 0, SEEK_CUR)))
            let length = Int64(info.st_size) - offset
            guard length > 0 else { return nil }
            do {
                return try RequestBody.file(URL(fileURLWithPath: selfPath), offset: offset, length: length)
            } catch let error as CourierError {
                throw CLIError.failure("cannot read stdin: \(error.message)")
            }
        }
        var first = ByteBufferAllocator().buffer(capacity: chunkSize)
        var ended = false
        while first.writableBytes > 0 {
            let count = try readChunk(into: &first)
            if count == 0 {
                ended = true
                break
            }
        }
        if ended { return first.readableBytes == 0 ? nil : .byteBuffer(first) }
        return .oneShotStream(length: nil, Chunks(first: first))
    }

    /// The path that reopens this process's stdin.
    private static var selfPath: String {
        #if os(Linux)
            "/proc/self/fd/0"
        #else
            "/dev/fd/0"
        #endif
    }

    /// Appends what one `read(2)` of stdin gives to `buffer`; 0 at the end.
    static func readChunk(into buffer: inout ByteBuffer) throws -> Int {
        try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 1) { pointer in
            while true {
                let count = read(0, pointer.baseAddress, pointer.count)
                if count >= 0 { return count }
                if errno == EINTR { continue }
                throw CLIError.failure("cannot read stdin: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// The next piece of stdin: one blocking read, then more while more is ready at once, up to
    /// ``chunkSize``, so a fast producer makes full pieces and a slow one is not kept waiting.
    /// A piece much smaller than its buffer is copied to fit, so queued pieces hold no slack.
    static func readAvailable() throws -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: chunkSize)
        guard try readChunk(into: &buffer) > 0 else { return buffer }
        while buffer.writableBytes > 0 {
            var ready = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 0) == 1, try readChunk(into: &buffer) > 0 else { break }
        }
        if buffer.readableBytes < chunkSize / 2 { return ByteBuffer(bytes: buffer.readableBytesView) }
        return buffer
    }

    /// The rest of stdin after the first piece, read on a queue of its own so that blocking
    /// reads never hold one of the concurrency pool's few threads.
    struct Chunks: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let first: ByteBuffer

        func makeAsyncIterator() -> Iterator { Iterator(pending: first) }

        struct Iterator: AsyncIteratorProtocol {
            var pending: ByteBuffer?
            var ended = false
            private static let queue = DispatchQueue(label: "courier.stdin")

            mutating func next() async throws -> ByteBuffer? {
                if let pending {
                    self.pending = nil
                    return pending
                }
                guard !ended else { return nil }
                try Task.checkCancellation()
                let chunk: ByteBuffer = try await withCheckedThrowingContinuation { continuation in
                    Self.queue.async {
                        continuation.resume(with: Result { try StandardInput.readAvailable() })
                    }
                }
                if chunk.readableBytes == 0 {
                    ended = true
                    return nil
                }
                return chunk
            }
        }
    }
}

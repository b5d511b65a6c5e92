import Foundation
import NIOConcurrencyHelpers
import NIOCore
import _NIOFileSystem

/// Reads a region of a file in large chunks, failing if the file holds fewer bytes than declared.
///
/// The file is opened, read and closed through swift-nio's file system (`FileSystem.shared`), so
/// every system call runs on its thread pool: a read from a slow disk holds one of that pool's
/// threads, never one of the few that run Swift tasks.
///
/// Reads go into a small ring of reused buffers rather than a fresh mebibyte per chunk: a
/// buffer handed out earlier is read into again only once its consumer has let go of it
/// (`ByteBuffer.clear()` keeps the storage when it is the only reference, and allocates a fresh
/// one when the socket still holds it), so a steady upload allocates no chunk storage and
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
        var file: OpenFile?
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
                guard let file else { return nil }
                self.file = nil
                try await file.finish(checkingGrowthPast: checksGrowth ? offset : nil)
                return nil
            }
            let file: OpenFile
            if let open = self.file {
                file = open
            } else {
                file = try await OpenFile(path: path)
                self.file = file
            }
            let count = Int(Swift.min(remaining, Int64(FileChunks.chunkSize)))
            let slot = ChunkSlot(takeBuffer(capacity: count))
            let read = try await file.read(into: slot, count: count, at: offset)
            let buffer = slot.buffer
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

    /// A file open through swift-nio's file system.
    ///
    /// Closed by ``finish(checkingGrowthPast:)`` at the end of the region, or in `deinit` when the
    /// reader is dropped before then (a cancelled upload): NIOFileSystem traps when a handle is
    /// dropped open, and closing a file that is only read does not block.
    final class OpenFile: Sendable {
        let path: String
        private let handle: ReadFileHandle
        private let isOpen = NIOLockedValueBox(true)

        /// - Throws: ``CourierError`` `.invalidFile` when the file cannot be opened.
        init(path: String) async throws {
            self.path = path
            do {
                handle = try await FileSystem.shared.openFile(forReadingAt: FilePath(path), options: OpenOptions.Read())
            } catch {
                throw Self.invalidFile("cannot open \(path)", error, path: path)
            }
        }

        deinit {
            guard isOpen.withLockedValue({ $0 }), let descriptor = try? handle.detachUnsafeFileDescriptor() else {
                return
            }
            Foundation.close(descriptor.rawValue)
        }

        /// Appends up to `count` bytes at `offset` to the slot's buffer, on the file system's
        /// thread pool; returns how many, 0 at end of file.
        /// - Throws: ``CourierError`` `.invalidFile` on a read error.
        func read(into slot: ChunkSlot, count: Int, at offset: Int64) async throws -> Int {
            let path = path
            do {
                return try await handle.withUnsafeDescriptor { descriptor in
                    try slot.buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
                        try FileReader.read(
                            descriptor.rawValue, into: UnsafeMutableRawBufferPointer(rebasing: pointer.prefix(count)),
                            at: offset, path: path)
                    }
                }
            } catch let error as CourierError {
                throw error
            } catch {
                throw Self.invalidFile("cannot read \(path)", error, path: path)
            }
        }

        /// Closes the file, after checking, when `end` is given, that it holds no more than `end`
        /// bytes (a longer file means the body's declared length is stale).
        /// - Throws: ``CourierError`` `.bodyLengthMismatch` for a file that grew; `.invalidFile`
        ///   when its size cannot be read.
        func finish(checkingGrowthPast end: Int64?) async throws {
            defer { isOpen.withLockedValue { $0 = false } }
            do {
                if let end {
                    let size = try await handle.info().size
                    try FileReader.checkSize(size, atEnd: end, path: path)
                }
                try await handle.close()
            } catch {
                // The handle must not be dropped open, whatever failed.
                if let descriptor = try? handle.detachUnsafeFileDescriptor() { Foundation.close(descriptor.rawValue) }
                if let error = error as? CourierError { throw error }
                throw Self.invalidFile("cannot read \(path)", error, path: path)
            }
        }

        /// A `.invalidFile` error naming the system's reason (`No such file or directory`).
        private static func invalidFile(_ what: String, _ error: any Error, path: String) -> CourierError {
            let reason = ((error as? FileSystemError)?.cause as? Errno).map { String(describing: $0) }
            return CourierError(
                .invalidFile, "\(what): \(reason ?? String(describing: error))", offendingInput: path,
                underlyingError: error)
        }
    }

    /// Carries a ring buffer into the thread pool's closure and back as its only reference, so
    /// that reading into it does not copy it. Touched by one thread at a time: the iterator
    /// awaits the read that fills it.
    final class ChunkSlot: @unchecked Sendable {
        var buffer: ByteBuffer

        init(_ buffer: ByteBuffer) { self.buffer = buffer }
    }
}

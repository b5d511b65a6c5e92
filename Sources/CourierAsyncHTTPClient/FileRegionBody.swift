import AsyncHTTPClient
import CourierCore
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// A request body described as bytes and file regions, written so that file parts go out with
/// sendfile(2): the kernel moves file pages to the socket without copying them through user memory.
///
/// Only for plain HTTP: TLS has to encrypt every byte in user space, so a TLS body is read in
/// large chunks instead (`RequestBody.makeChunks()`). Files are opened, and their sizes
/// checked, when the body is made (off the event loop); each file goes out in regions so that
/// progress moves and the size is checked again between regions. Each region doubles the last
/// while they go out fast and halves it when one does not: on a loopback, fixed 4 MiB regions
/// cost a short sendfile and a turn through AsyncHTTPClient's writer every 2 ms.
/// A file that shrinks while a region is on the wire would make sendfile return 0 forever, so a
/// watchdog on the request's event loop checks the sizes every ``watchInterval`` and fails the
/// request with `.bodyLengthMismatch` instead of letting it spin. It checks through a duplicate
/// descriptor of its own: NIO marks a `NIOFileHandle` in use while it sends from it, and a
/// connection on another event loop than the request's sends almost without pause, so a check
/// through the handle itself was refused nearly every time and the spin went on for ever.
final class FileRegionBody: Sendable {
    /// Bytes in the first `FileRegion` write, and the fewest in any later one.
    static let regionSize: Int64 = 4 << 20
    /// The most bytes in one `FileRegion` write, however fast the regions go out.
    static let largestRegion: Int64 = 1 << 30
    /// A region handed over in less time than this makes the next one twice as large.
    static let fastRegion: TimeAmount = .milliseconds(50)
    /// How often the watchdog checks that no file shrank under a region being sent.
    static let watchInterval: TimeAmount = .milliseconds(100)
    /// Runs of in-memory segments smaller than this are joined into one write.
    static let smallSegmentLimit = 64 << 10

    struct OpenFile: Sendable {
        let handle: NIOFileHandle
        /// A duplicate of the handle's descriptor, only for `fstat` (see the type's comment).
        let sizeDescriptor: CInt
        let path: String
        let offset: Int64
        let length: Int64
    }

    private enum Piece: Sendable {
        case bytes(ByteBuffer)
        case file(OpenFile)
    }

    private let pieces: [Piece]
    /// The open files, in body order (internal for the watchdog's tests).
    let files: [OpenFile]
    /// The exact number of body bytes.
    let contentLength: Int64
    private let isClosed = NIOLockedValueBox(false)

    /// Opens every file segment and checks it still holds its declared bytes.
    /// - Throws: `CourierError` `.invalidFile` when a file cannot be opened, `.bodyLengthMismatch`
    ///   when one has shrunk since it was added. Files already opened are closed again.
    init(segments: [BodySegment]) throws {
        var pieces: [Piece] = []
        var files: [OpenFile] = []
        var small = ByteBuffer()
        var total: Int64 = 0

        func flushSmall() {
            guard small.readableBytes > 0 else { return }
            pieces.append(.bytes(small))
            small = ByteBuffer()
        }

        do {
            for segment in segments {
                total += segment.length
                switch segment {
                case .bytes(let buffer) where buffer.readableBytes < Self.smallSegmentLimit:
                    small.writeImmutableBuffer(buffer)
                case .bytes(let buffer):
                    flushSmall()
                    pieces.append(.bytes(buffer))
                case .file(let path, let offset, let length):
                    guard length > 0 else { continue }
                    flushSmall()
                    let file = try Self.open(path: path, offset: offset, length: length)
                    files.append(file)
                    pieces.append(.file(file))
                }
            }
            flushSmall()
        } catch {
            for file in files { Self.closeFile(file) }
            throw error
        }
        self.pieces = pieces
        self.files = files
        self.contentLength = total
    }

    /// The body for AsyncHTTPClient's delegate API, with `Content-Length`.
    func makeBody() -> HTTPClient.Body {
        HTTPClient.Body.stream(contentLength: contentLength) { writer in
            self.write(pieceIndex: 0, position: 0, regionSize: Self.regionSize, after: nil, to: writer)
        }
    }

    /// Starts the shrink watchdog for `task` and closes the files once it has completed.
    ///
    /// The watchdog stops once `isRequestSent` says the request's last byte is on the wire. Not
    /// when the last region was handed over: AsyncHTTPClient takes a write as soon as the
    /// channel is writable again, which it is while the end of that region is still being sent.
    func attach(to task: HTTPClient.Task<Void>, isRequestSent: @escaping @Sendable () -> Bool) {
        let watchdog: RepeatedTask? =
            files.isEmpty
            ? nil
            : task.eventLoop.scheduleRepeatedTask(initialDelay: Self.watchInterval, delay: Self.watchInterval) {
                [weak self] repeated in
                guard let self, !self.isClosed.withLockedValue({ $0 }), !isRequestSent() else {
                    repeated.cancel()
                    return
                }
                if let error = self.shrinkError() { task.fail(reason: error) }
            }
        let eventLoop = task.eventLoop
        task.futureResult.whenComplete { _ in
            watchdog?.cancel()
            self.close(retryingOn: eventLoop)
        }
    }

    /// Closes the files once; NIO refuses to use a closed `NIOFileHandle`, so a region still
    /// queued on a failing connection cannot send from a reused descriptor number.
    ///
    /// A handle that NIO is sending from at this instant (on the connection's event loop, while
    /// the request has already failed on its own) refuses to close. Dropped like that, it would
    /// leak its descriptor, and a debug build traps in its deinit. So a refused close is tried
    /// again on `eventLoop`, a moment later, until the send lets go of it.
    func close(retryingOn eventLoop: (any EventLoop)? = nil) {
        let wasClosed = isClosed.withLockedValue { isClosed in
            defer { isClosed = true }
            return isClosed
        }
        guard !wasClosed else { return }
        for file in files { Self.closeFile(file, retryingOn: eventLoop) }
    }

    /// Writes piece `pieceIndex` from `position` (a file in regions of up to `regionSize` bytes),
    /// then the rest, each after the previous write's backpressure future; `after` is nil first.
    private func write(
        pieceIndex: Int, position: Int64, regionSize: Int64, after previous: EventLoopFuture<Void>?,
        to writer: HTTPClient.Body.StreamWriter
    ) -> EventLoopFuture<Void> {
        guard pieceIndex < pieces.count else {
            // A body always has at least one piece, so `previous` is set here.
            return previous ?? writer.write(.byteBuffer(ByteBuffer()))
        }
        let data: IOData
        var next: (index: Int, position: Int64) = (pieceIndex + 1, 0)
        switch pieces[pieceIndex] {
        case .bytes(let buffer):
            data = .byteBuffer(buffer)
        case .file(let file):
            let count = Swift.min(regionSize, file.length - position)
            if let previous, let error = Self.shrinkError(of: file, needing: position + count) {
                return previous.eventLoop.makeFailedFuture(error)
            }
            let start = Int(file.offset + position)
            data = .fileRegion(FileRegion(fileHandle: file.handle, readerIndex: start, endIndex: start + Int(count)))
            if position + count < file.length { next = (pieceIndex, position + count) }
        }
        let handedOver = NIODeadline.now()
        let written = writer.write(data)
        return written.flatMap { [next] in
            let size =
                NIODeadline.now() - handedOver < Self.fastRegion
                ? Swift.min(2 * regionSize, Self.largestRegion) : Swift.max(regionSize / 2, Self.regionSize)
            return self.write(
                pieceIndex: next.index, position: next.position, regionSize: size, after: written, to: writer)
        }
    }

    /// The error for the first file that no longer holds its bytes; nil while every one does.
    func shrinkError() -> CourierError? {
        files.lazy.compactMap { Self.shrinkError(of: $0, needing: $0.length) }.first
    }

    /// An error when `file` no longer holds `needed` bytes from its offset; nil when it does or
    /// when it cannot be checked (a closed handle fails the write on its own).
    private static func shrinkError(of file: OpenFile, needing needed: Int64) -> CourierError? {
        var info = stat()
        guard fstat(file.sizeDescriptor, &info) == 0 else { return nil }
        let size = Int64(info.st_size)
        guard size < file.offset + needed else { return nil }
        return CourierError(
            .bodyLengthMismatch,
            "\(file.path) shrank to \(size) bytes after it was added to the body, which needs \(file.offset + file.length)",
            offendingInput: file.path)
    }

    private static func open(path: String, offset: Int64, length: Int64) throws -> OpenFile {
        let descriptor = Foundation.open(path, O_RDONLY | O_CLOEXEC)
        let sizeDescriptor = descriptor >= 0 ? dup(descriptor) : -1
        guard sizeDescriptor >= 0 else {
            let code = errno
            if descriptor >= 0 { Foundation.close(descriptor) }
            throw CourierError(
                .invalidFile, "cannot open \(path): \(String(cString: strerror(code)))", offendingInput: path,
                underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
        }
        let file = OpenFile(
            handle: NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: descriptor), sizeDescriptor: sizeDescriptor,
            path: path, offset: offset, length: length)
        if let error = shrinkError(of: file, needing: length) {
            closeFile(file)
            throw error
        }
        return file
    }

    private static func closeFile(_ file: OpenFile, retryingOn eventLoop: (any EventLoop)? = nil) {
        Foundation.close(file.sizeDescriptor)
        closeHandle(file.handle, retryingOn: eventLoop, attempt: 0)
    }

    /// How many times a busy handle's close is tried again: 1, 2, 4 ... 64 ms apart, then every
    /// 100 ms, about 4.4 s in all. A send holds a handle only for one sendfile call on a
    /// non-blocking socket.
    static let closeRetryLimit = 50

    private static func closeHandle(_ handle: NIOFileHandle, retryingOn eventLoop: (any EventLoop)?, attempt: Int) {
        do {
            try handle.close()
        } catch let error as IOError where error.errnoCode == EBUSY {
            guard let eventLoop, attempt < closeRetryLimit else { return }
            let pause = TimeAmount.milliseconds(Int64(min(100, 1 << min(attempt, 7))))
            eventLoop.scheduleTask(in: pause) { closeHandle(handle, retryingOn: eventLoop, attempt: attempt + 1) }
        } catch {
            // Already closed (EBADF): nothing left to release.
        }
    }
}

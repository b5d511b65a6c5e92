import Foundation
import NIOCore

extension MultipartFormData {
    /// A fresh reader of the whole body; each call starts from the first byte again, which is
    /// what a redirect or retry needs (AFNetworking's `needNewBodyStream`).
    /// - Throws: ``CourierError``: an input recorded by a non-throwing append (``validate()``);
    ///   `.bodyNotReplayable` when a one-shot stream part was already read;
    ///   `.asyncPartNeedsAsyncRead` when a part is an `AsyncSequence`.
    public func makeReader() throws -> MultipartBodyReader {
        try validate()
        for case .stream(let part) in pieces where part.isAsync {
            throw CourierError(
                .asyncPartNeedsAsyncRead,
                "multipart part \(part.label) is an AsyncSequence and can only be read with makeChunks()",
                offendingInput: part.label)
        }
        for case .stream(let part) in pieces { try part.reserve() }
        return MultipartBodyReader(storage: storage, pieces: allPieces, throttle: throttle)
    }
}

/// A pull reader of a multipart body, in the manner of AFMultipartBodyStream: it walks the
/// body's phases (boundary and headers, content, final boundary) and copies each straight
/// into the caller's buffer.
///
/// Cost: no allocation per read; file contents are read with one `pread` per call into the
/// caller's memory, so a large buffer (a mebibyte) gives large sequential reads. A reader is
/// not shared between tasks; make one per consumer with ``MultipartFormData/makeReader()``.
/// After an error every further read throws the same error.
public final class MultipartBodyReader {
    private let storage: ByteBuffer
    private let pieces: [MultipartPiece]
    private let throttle: MultipartFormData.Throttle?
    private var index = 0
    /// The position inside `pieces[index]`.
    private var position: Int64 = 0
    private var file: FileReader?
    private var stream: InputStream?
    private var failure: CourierError?
    private var hasRead = false

    /// The number of body bytes delivered so far.
    public private(set) var bytesRead: Int64 = 0

    init(storage: ByteBuffer, pieces: [MultipartPiece], throttle: MultipartFormData.Throttle?) {
        self.storage = storage
        self.pieces = pieces
        self.throttle = throttle
    }

    deinit { stream?.close() }

    /// Whether every byte of the body has been delivered.
    public var isAtEnd: Bool { index >= pieces.count }

    /// Fills as much of `buffer` as the body has left (at most the throttle's packet size when
    /// throttled, after waiting its delay); returns the number of bytes written, 0 at the end.
    /// - Throws: ``CourierError``: `.invalidFile` when a file cannot be opened or read;
    ///   `.bodyLengthMismatch` when a file changed size or a stream yielded fewer or more bytes
    ///   than declared; `.streamReadFailed` when a caller's stream fails.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if let failure { throw failure }
        var limit = buffer.count
        if let throttle {
            limit = Swift.min(limit, throttle.packetSize)
            // A deliberate, bounded pause: this is what throttling is for (AFNetworking sleeps too).
            if hasRead, throttle.delay > 0, !isAtEnd { Thread.sleep(forTimeInterval: throttle.delay) }
        }
        hasRead = true
        var filled = 0
        do {
            while index < pieces.count {
                let piece = pieces[index]
                let remaining = piece.length - position
                if remaining == 0 {
                    try finish(piece)
                    index += 1
                    position = 0
                    continue
                }
                if filled == limit { break }
                let count = Int(Swift.min(Int64(limit - filled), remaining))
                let target = UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<(filled + count)])
                let read = try read(piece, into: target)
                filled += read
                position += Int64(read)
            }
        } catch let error as CourierError {
            fail(error)
            throw error
        } catch {
            let wrapped = CourierError(
                .streamReadFailed, "reading the multipart body failed: \(error)",
                underlyingError: error)
            fail(wrapped)
            throw wrapped
        }
        bytesRead += Int64(filled)
        return filled
    }

    /// Reads into the writable space of `buffer`, reserving `maxLength` bytes first; returns the
    /// count written. No allocation once the buffer has that capacity.
    /// - Throws: as ``read(into:)-(UnsafeMutableRawBufferPointer)``.
    public func read(into buffer: inout ByteBuffer, maxLength: Int) throws -> Int {
        try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: maxLength) { pointer in
            try read(into: UnsafeMutableRawBufferPointer(rebasing: pointer.prefix(maxLength)))
        }
    }

    private func fail(_ error: CourierError) {
        failure = error
        stream?.close()
        stream = nil
        file = nil
    }

    /// Copies bytes of `piece` from `position` into `target` (which is no longer than what is left).
    private func read(_ piece: MultipartPiece, into target: UnsafeMutableRawBufferPointer) throws -> Int {
        switch piece {
        case .inline(let offset, _):
            storage.withUnsafeReadableBytes { bytes in
                let start = offset + Int(position)
                target.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + target.count)]))
            }
            return target.count
        case .buffer(let buffer):
            buffer.withUnsafeReadableBytes { bytes in
                let start = Int(position)
                target.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + target.count)]))
            }
            return target.count
        case .data(let data):
            data.withUnsafeBytes { bytes in
                let start = Int(position)
                target.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + target.count)]))
            }
            return target.count
        case .file(let path, _):
            let reader = try file ?? FileReader(path: path)
            file = reader
            let read = try reader.read(into: target, at: position)
            if read == 0 {
                throw CourierError(
                    .bodyLengthMismatch,
                    "\(path) ended \(piece.length - position) bytes early: it shrank after it was added to the form",
                    offendingInput: path)
            }
            return read
        case .stream(let part):
            let input = try openStream(part)
            guard let base = target.baseAddress else { return 0 }
            let read = input.read(base.assumingMemoryBound(to: UInt8.self), maxLength: target.count)
            if read < 0 { throw part.readFailedError() }
            if read == 0 { throw part.shortError(read: position) }
            return read
        }
    }

    private func openStream(_ part: MultipartStreamPart) throws -> InputStream {
        if let stream { return stream }
        guard case .inputStream(let input) = try part.open() else {
            throw CourierError(
                .asyncPartNeedsAsyncRead, "multipart part \(part.label) is an AsyncSequence",
                offendingInput: part.label)
        }
        if input.streamStatus == .notOpen { input.open() }
        stream = input
        return input
    }

    /// Checks that a file or stream piece really ended where it was declared to end.
    private func finish(_ piece: MultipartPiece) throws {
        switch piece {
        case .file(let path, let length):
            let reader = try file ?? FileReader(path: path)
            file = nil
            try reader.checkAtEnd(offset: length)
        case .stream(let part):
            let input = try openStream(part)
            defer {
                input.close()
                stream = nil
            }
            try part.checkEnded(input)
        default:
            break
        }
    }
}

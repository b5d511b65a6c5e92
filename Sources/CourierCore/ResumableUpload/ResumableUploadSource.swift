import Foundation
import NIOCore

/// The bytes of a resumable upload, as a ``RequestContent`` gave them, cut into the range each
/// request sends: a file stays a file region (sendfile, constant memory), bytes stay shared, and
/// any other replayable body of known length is read again and the bytes before the range skipped.
struct ResumableUploadSource: Sendable {
    let body: RequestBody
    let length: Int64
    /// The representation's media type: the content's, else guessed from a file's name.
    let contentType: String?
    /// A file's last path component, sent as `filename`.
    let fileName: String?
    /// A file's absolute path and modification time, for its fingerprint; nil for other bodies.
    let file: (path: String, modificationTime: Int64)?

    /// - Throws: ``CourierError`` `.invalidFile` for a file that cannot be read, `.bodyNotReplayable`
    ///   for a one-shot stream, `.unsupportedBody` for a body of unknown length, `content`'s own errors.
    init(_ content: RequestContent, method: HTTPMethod, path: String) throws {
        if case .file(let url, let contentType) = content {
            let body = try RequestBody.file(url)
            var info = stat()
            guard stat(url.path, &info) == 0 else {
                throw CourierError(.invalidFile, "cannot read \(url.path)", offendingInput: url.path)
            }
            self.body = body
            self.length = body.contentLength ?? 0
            self.fileName = url.lastPathComponent
            self.contentType = contentType ?? MIMETypes.type(forFileName: url.lastPathComponent)
            #if canImport(Darwin)
                let modified = info.st_mtimespec
            #else
                let modified = info.st_mtim
            #endif
            self.file = (url.standardizedFileURL.path, Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec))
            return
        }
        guard let encoded = try content.encodedBody(for: method, path: path) else {
            throw CourierError(
                .unsupportedBody, "a resumable upload of \"\(path)\" needs content, not parameters",
                offendingInput: path)
        }
        guard encoded.body.isReplayable else {
            throw CourierError(
                .bodyNotReplayable, "a resumable upload of \"\(path)\" needs a body it can read again from any offset",
                offendingInput: path)
        }
        guard let length = encoded.contentLength ?? encoded.body.contentLength else {
            throw CourierError(
                .unsupportedBody, "a resumable upload of \"\(path)\" needs a body of known length", offendingInput: path
            )
        }
        self.body = encoded.body
        self.length = length
        self.contentType = encoded.contentType
        self.fileName = nil
        self.file = nil
    }

    /// The body of `count` bytes from `offset`.
    /// - Throws: ``CourierError`` `.invalidFile` when a file shrank under the range.
    func slice(from offset: Int64, count: Int64) throws -> RequestBody {
        if offset == 0 && count == length { return body }
        switch body.storage {
        case .empty: return .empty
        case .bytes(let buffer):
            return .byteBuffer(
                buffer.getSlice(at: buffer.readerIndex + Int(offset), length: Int(count)) ?? ByteBuffer())
        case .file(let path, let start, _):
            return try .file(URL(fileURLWithPath: path), offset: start + offset, length: count)
        case .source:
            return .source(SlicedBodySource(base: body, offset: offset, count: count))
        }
    }
}

/// `count` bytes from `offset` of a replayable body: its segments cut to the range when it has
/// them (for sendfile), else its chunks read from the start with the bytes outside the range dropped.
struct SlicedBodySource: RequestBodySource {
    let base: RequestBody
    let offset: Int64
    let count: Int64

    var contentLength: Int64? { count }
    var isReplayable: Bool { true }

    var segments: [BodySegment]? {
        guard let whole = base.segments else { return nil }
        var result: [BodySegment] = []
        var position: Int64 = 0
        let end = offset + count
        for segment in whole {
            let segmentEnd = position + segment.length
            defer { position = segmentEnd }
            let from = max(position, offset)
            let to = min(segmentEnd, end)
            guard from < to else { continue }
            switch segment {
            case .bytes(let buffer):
                if let piece = buffer.getSlice(at: buffer.readerIndex + Int(from - position), length: Int(to - from)) {
                    result.append(.bytes(piece))
                }
            case .file(let path, let fileOffset, _):
                result.append(.file(path: path, offset: fileOffset + from - position, length: to - from))
            }
        }
        return result
    }

    func makeChunks() throws -> BodyChunks {
        let chunks = try base.makeChunks()
        let offset = offset
        let end = offset + count
        return BodyChunks(makeNext: {
            var iterator = chunks.makeAsyncIterator()
            var position: Int64 = 0
            return {
                while position < end, var chunk = try await iterator.next() {
                    let chunkStart = position
                    position += Int64(chunk.readableBytes)
                    if position <= offset { continue }
                    if chunkStart < offset { chunk.moveReaderIndex(forwardBy: Int(offset - chunkStart)) }
                    if position > end { chunk.moveWriterIndex(to: chunk.writerIndex - Int(position - end)) }
                    return chunk
                }
                return nil
            }
        })
    }
}

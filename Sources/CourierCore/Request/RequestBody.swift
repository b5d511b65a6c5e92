import Foundation
import NIOCore

/// A request body: a description of how to produce its bytes, replayable where possible.
///
/// Modes, in the manner of AsyncHTTPClient's `HTTPClientRequest.Body`: no body, bytes in
/// memory, a region of a file, or a ``RequestBodySource`` (a multipart form, a stream).
/// ``isReplayable`` says whether ``makeChunks()`` may be called again, which is what a 307/308
/// redirect or a retry needs; a one-shot stream is not, and resending it is a typed error.
public struct RequestBody: Sendable {
    enum Storage: Sendable {
        case empty
        case bytes(ByteBuffer)
        case file(path: String, offset: Int64, length: Int64)
        case source(any RequestBodySource)
    }

    let storage: Storage
    /// For a file body: whether its region ran to the end of the file when the body was made.
    /// Only then does a longer file at the end of the read mean that the file grew; a region
    /// that stops short of the end always leaves bytes after it.
    let fileRegionReachedEnd: Bool

    init(storage: Storage, fileRegionReachedEnd: Bool = true) {
        self.storage = storage
        self.fileRegionReachedEnd = fileRegionReachedEnd
    }

    /// No body.
    public static let empty = RequestBody(storage: .empty)

    /// A body of the given bytes. The bytes are copied once into a `ByteBuffer`.
    public static func data(_ data: some DataProtocol) -> RequestBody {
        var buffer = ByteBufferAllocator().buffer(capacity: data.count)
        buffer.writeBytes(data)
        return RequestBody(storage: .bytes(buffer))
    }

    /// A body of the given buffer, shared without a copy.
    public static func byteBuffer(_ buffer: ByteBuffer) -> RequestBody {
        RequestBody(storage: .bytes(buffer))
    }

    /// A body read from a file, whole or from `offset` for `length` bytes. The size is read now.
    /// - Throws: ``CourierError`` `.invalidFile` when the URL is not a file URL, the file is
    ///   missing, is a directory or cannot be read, or the range lies outside the file.
    public static func file(_ url: URL, offset: Int64 = 0, length: Int64? = nil) throws -> RequestBody {
        let info = try FileInfo(url: url)
        let available = info.size - offset
        guard offset >= 0, offset <= info.size, available >= (length ?? 0), (length ?? 0) >= 0 else {
            throw CourierError(
                .invalidFile,
                "the range \(offset)+\(length ?? available) lies outside \(url.path) (\(info.size) bytes)",
                offendingInput: url.path)
        }
        let regionLength = length ?? available
        return RequestBody(
            storage: .file(path: info.path, offset: offset, length: regionLength),
            fileRegionReachedEnd: offset + regionLength == info.size)
    }

    /// A body produced by `source` (a multipart form, a stream of known or unknown length).
    public static func source(_ source: any RequestBodySource) -> RequestBody {
        RequestBody(storage: .source(source))
    }

    /// A replayable stream: `makeStream` is called for each send and must produce the same bytes.
    /// `length`, when given, is checked: more or fewer bytes are a `.bodyLengthMismatch` error.
    public static func stream<S: AsyncSequence & Sendable>(
        length: Int64?, _ makeStream: @escaping @Sendable () -> S
    ) -> RequestBody where S.Element == ByteBuffer {
        RequestBody(storage: .source(StreamBodySource(length: length, replayable: true) { BodyChunks(makeStream()) }))
    }

    /// A stream that can be sent once only; a redirect or retry that needs it again fails
    /// with `.bodyNotReplayable` instead of sending an empty body.
    public static func oneShotStream<S: AsyncSequence & Sendable>(length: Int64?, _ stream: S) -> RequestBody
    where S.Element == ByteBuffer {
        RequestBody(storage: .source(StreamBodySource(length: length, replayable: false) { BodyChunks(stream) }))
    }

    /// The exact number of bytes, or nil when unknown (it then goes out chunked).
    public var contentLength: Int64? {
        switch storage {
        case .empty: return 0
        case .bytes(let buffer): return Int64(buffer.readableBytes)
        case .file(_, _, let length): return length
        case .source(let source): return source.contentLength
        }
    }

    /// True when there is no body at all.
    public var isEmpty: Bool {
        if case .empty = storage { return true }
        return false
    }

    /// Whether ``makeChunks()`` can be called more than once.
    public var isReplayable: Bool {
        if case .source(let source) = storage { return source.isReplayable }
        return true
    }

    /// The body as bytes and file regions, when it can be described so (for sendfile); nil for streams.
    public var segments: [BodySegment]? {
        switch storage {
        case .empty: return []
        case .bytes(let buffer): return [.bytes(buffer)]
        case .file(let path, let offset, let length): return [.file(path: path, offset: offset, length: length)]
        case .source(let source): return source.segments
        }
    }

    /// The in-memory bytes, when the body is held in memory (empty or bytes); nil otherwise.
    public var bufferedBytes: ByteBuffer? {
        switch storage {
        case .empty: return ByteBuffer()
        case .bytes(let buffer): return buffer
        default: return nil
        }
    }

    /// A fresh sequence of the body's bytes.
    /// - Throws: ``CourierError`` `.bodyNotReplayable` for a one-shot body already consumed.
    public func makeChunks() throws -> BodyChunks {
        switch storage {
        case .empty: return BodyChunks(EmptyChunks())
        case .bytes(let buffer): return BodyChunks(SingleChunk(buffer: buffer))
        case .file(let path, let offset, let length):
            return BodyChunks(
                FileChunks(path: path, offset: offset, length: length, checksGrowth: fileRegionReachedEnd))
        case .source(let source): return try source.makeChunks()
        }
    }
}

/// A producer of body bytes that ``RequestBody`` can carry: a multipart form, a stream.
public protocol RequestBodySource: Sendable {
    /// The exact number of bytes the source produces, or nil when unknown.
    var contentLength: Int64? { get }
    /// Whether ``makeChunks()`` may be called more than once.
    var isReplayable: Bool { get }
    /// The bytes as memory and file regions, for zero-copy sends; nil when they cannot be described so.
    var segments: [BodySegment]? { get }
    /// A fresh sequence of the bytes.
    /// - Throws: ``CourierError`` `.bodyNotReplayable` when a one-shot source is asked twice.
    func makeChunks() throws -> BodyChunks
}

extension RequestBodySource {
    public var segments: [BodySegment]? { nil }
}

/// A piece of a body described without reading it: bytes in memory, or a region of a file.
public enum BodySegment: Sendable, Equatable {
    /// Bytes in memory, shared without a copy.
    case bytes(ByteBuffer)
    /// `length` bytes of the file at `path` from `offset`; the file's size is checked when read.
    case file(path: String, offset: Int64, length: Int64)

    /// The number of bytes in this segment.
    public var length: Int64 {
        switch self {
        case .bytes(let buffer): return Int64(buffer.readableBytes)
        case .file(_, _, let length): return length
        }
    }
}

import Foundation
import NIOCore

/// A multipart/form-data body (RFC 7578), built part by part and read as a stream.
///
/// A value type: copies are independent, and building one needs no lock. The bytes follow
/// AFNetworking's layout exactly: `--B\r\n` before the first part, `\r\n--B\r\n` between
/// parts, `\r\n--B--\r\n` at the end; each part is `Name: value\r\n` header lines, a blank
/// line and the content. A form with no parts has an empty body.
///
/// Cost: boundaries, headers, text fields and small data parts are copied once into one
/// shared buffer as they are appended; larger `Data` and `ByteBuffer` parts are kept by
/// reference; files and streams are only described (a file's size is read when it is appended)
/// and read while the body is read. ``contentLength`` is exact and costs nothing to ask for.
///
/// Conforms to ``RequestBodySource``: `RequestBody.source(form)` makes it a request body.
public struct MultipartFormData: Sendable {
    /// The boundary between parts.
    public let boundary: MultipartBoundary
    /// How file names are written for parts appended from now on.
    public var fileNameEncoding: MultipartFileNameEncoding = .quoted
    /// Bandwidth throttling for readers made from now on; nil reads as fast as possible.
    public var throttle: Throttle?

    /// Boundaries, headers and small contents, in body order; pieces refer into it.
    var storage: ByteBuffer
    /// The body before the final boundary, in order.
    var pieces: [MultipartPiece] = []
    /// `\r\n--B\r\n`; its slice from index 2 is the first part's `--B\r\n`.
    let delimiter: ByteBuffer
    /// `\r\n--B--\r\n`.
    let closeDelimiter: ByteBuffer
    /// The length of the body before the final boundary.
    var lengthBeforeClose: Int64 = 0
    /// The first invalid input given to a non-throwing append, thrown when the body is read.
    var deferredError: CourierError?

    /// The number of parts appended.
    public internal(set) var partCount = 0

    /// Makes an empty form with a random boundary (``MultipartBoundary/random()``).
    public init() {
        self.init(boundary: MultipartBoundary.random())
    }

    /// Makes an empty form with `boundary`.
    public init(boundary: MultipartBoundary) {
        self.boundary = boundary
        var delimiter = ByteBuffer()
        delimiter.writeStaticString("\r\n--")
        delimiter.writeString(boundary.rawValue)
        delimiter.writeStaticString("\r\n")
        self.delimiter = delimiter
        var close = ByteBuffer()
        close.writeStaticString("\r\n--")
        close.writeString(boundary.rawValue)
        close.writeStaticString("--\r\n")
        self.closeDelimiter = close
        self.storage = ByteBuffer()
    }

    /// Makes an empty form with a caller's boundary, validated against RFC 2046.
    /// - Throws: ``CourierError`` `.invalidBoundary` quoting `boundary`.
    public init(boundary: String) throws {
        self.init(boundary: try MultipartBoundary(validating: boundary))
    }

    /// The request's `Content-Type`: `multipart/form-data; boundary=…`, the boundary quoted
    /// when it holds characters a header parameter token cannot.
    public var contentType: String {
        boundary.needsQuoting
            ? "multipart/form-data; boundary=\"\(boundary.rawValue)\""
            : "multipart/form-data; boundary=\(boundary.rawValue)"
    }

    /// The exact number of bytes of the whole body, boundaries and headers included. Never
    /// nil (optional only to match ``RequestBodySource``); 0 for a form with no parts.
    public var contentLength: Int64? {
        partCount == 0 ? 0 : lengthBeforeClose + Int64(closeDelimiter.readableBytes)
    }

    /// Whether the body can be read more than once: false when a one-shot stream was appended.
    public var isReplayable: Bool {
        !pieces.contains { if case .stream(let part) = $0 { return !part.isReplayable } else { return false } }
    }

    /// Throws the first invalid input that a non-throwing append recorded, if any.
    /// - Throws: ``CourierError`` (such as `.invalidHeader` for a MIME type with CR, LF or NUL).
    public func validate() throws {
        if let deferredError { throw deferredError }
    }

    /// The whole body as pieces, final boundary included.
    var allPieces: [MultipartPiece] {
        guard partCount > 0 else { return [] }
        var all = pieces
        all.append(.buffer(closeDelimiter))
        return all
    }
}

extension MultipartFormData {
    /// Bandwidth throttling in the manner of AFNetworking's `throttleBandwidthWithPacketSize:delay:`:
    /// each read returns at most ``packetSize`` bytes, and reads after the first wait ``delay``.
    public struct Throttle: Sendable, Hashable {
        /// AFNetworking's suggested packet size for slow (3G) links: 16 KiB.
        public static let suggestedPacketSize = 16 * 1024
        /// AFNetworking's suggested delay for slow (3G) links: 0.2 seconds.
        public static let suggestedDelay: TimeInterval = 0.2
        /// The suggested packet size and delay together.
        public static let suggested = Throttle(packetSize: suggestedPacketSize, delay: suggestedDelay)

        /// The most bytes one read returns; at least 1.
        public var packetSize: Int
        /// The seconds to wait before each read after the first; at least 0.
        public var delay: TimeInterval

        /// Makes a throttle; a packet size below 1 is taken as 1, a negative delay as 0.
        public init(packetSize: Int, delay: TimeInterval) {
            self.packetSize = Swift.max(1, packetSize)
            self.delay = Swift.max(0, delay)
        }
    }
}

/// One contiguous stretch of a multipart body.
enum MultipartPiece: Sendable {
    /// Bytes in the form's storage (boundaries, headers, small contents).
    case inline(offset: Int, length: Int)
    /// A buffer shared with the caller.
    case buffer(ByteBuffer)
    /// Data shared with the caller (not copied, so a large part costs no second copy).
    case data(Data)
    /// A whole file, whose size was read when it was appended.
    case file(path: String, length: Int64)
    /// A stream of declared length.
    case stream(MultipartStreamPart)

    var length: Int64 {
        switch self {
        case .inline(_, let length): return Int64(length)
        case .buffer(let buffer): return Int64(buffer.readableBytes)
        case .data(let data): return Int64(data.count)
        case .file(_, let length): return length
        case .stream(let part): return part.length
        }
    }
}

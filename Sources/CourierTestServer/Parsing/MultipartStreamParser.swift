import Foundation
import NIOCore

/// One part's head, as the streaming multipart parser reports it.
struct MultipartPartHead {
    /// The part's header lines in arrival order, names as sent.
    var headers: [(name: String, value: String)]
    /// `name` from Content-Disposition.
    var name: String?
    /// `filename` (or the decoded `filename*`) from Content-Disposition.
    var filename: String?
    /// The part's Content-Type header.
    var contentType: String?
}

/// What the parser saw, in stream order.
enum MultipartEvent {
    case partBegin(MultipartPartHead)
    /// A slice of the current part's body; it shares storage with the input chunk.
    case bodyChunk(ByteBuffer)
    case partEnd
}

/// Why a multipart body could not be parsed.
struct MultipartParseError: Error, CustomStringConvertible {
    var description: String
}

/// A streaming `multipart/form-data` parser (RFC 7578 / RFC 2046) that holds at most one
/// delimiter's worth of bytes, or one part's header block, between chunks.
///
/// Body bytes are handed out as slices of the input chunks, never copied, so the upload sink
/// can hash gigabytes in constant memory.
struct MultipartStreamParser {
    private enum State {
        case preamble
        case afterDelimiter
        case headers
        case body
        case epilogue
    }

    /// The largest header block a part may have.
    static let maximumHeaderBytes = 16 * 1024

    private let delimiter: [UInt8]
    private var carry: ByteBuffer
    private var state: State = .preamble

    /// The boundary read from the Content-Type.
    let boundary: String

    /// Reads the boundary out of `contentType`; nil when it is not multipart or has no valid boundary.
    init?(contentType: String) {
        let parsed = HeaderParameters(parsing: contentType)
        guard parsed.value.lowercased().hasPrefix("multipart/"),
            let boundary = parsed.parameters["boundary"],
            (1...70).contains(boundary.utf8.count)
        else { return nil }
        self.boundary = boundary
        delimiter = Array("\r\n--\(boundary)".utf8)
        // A body normally starts with the delimiter minus its CRLF; a virtual CRLF lets one
        // search find both the first delimiter and the later ones.
        carry = ByteBuffer(bytes: [13, 10])
    }

    /// Whether the closing delimiter has been seen.
    var isComplete: Bool {
        if case .epilogue = state { return true }
        return false
    }

    /// Parses `chunk`, calling `emit` for each event. Throws on malformed input.
    mutating func feed(_ chunk: ByteBuffer, _ emit: (MultipartEvent) -> Void) throws {
        var work: ByteBuffer
        if carry.readableBytes > 0 {
            var incoming = chunk
            carry.writeBuffer(&incoming)
            work = carry
            carry = ByteBuffer()
        } else {
            work = chunk
        }
        try process(&work, emit)
        carry = work
    }

    /// Checks that the body ended with the closing delimiter.
    func finish() throws {
        guard isComplete else {
            switch state {
            case .preamble:
                throw MultipartParseError(description: "no multipart boundary \"\(boundary)\" found in the body")
            default:
                throw MultipartParseError(description: "the body ended before the closing boundary \"--\(boundary)--\"")
            }
        }
    }

    private mutating func process(_ work: inout ByteBuffer, _ emit: (MultipartEvent) -> Void) throws {
        while work.readableBytes > 0 {
            switch state {
            case .preamble, .body:
                let inBody: Bool
                if case .body = state { inBody = true } else { inBody = false }
                switch MultipartStreamParser.search(work, for: delimiter) {
                case .found(let offset):
                    if inBody {
                        if offset > 0, let slice = work.readSlice(length: offset) { emit(.bodyChunk(slice)) }
                        emit(.partEnd)
                    } else {
                        work.moveReaderIndex(forwardBy: offset)
                    }
                    work.moveReaderIndex(forwardBy: delimiter.count)
                    state = .afterDelimiter
                case .partial(let offset):
                    if inBody {
                        if offset > 0, let slice = work.readSlice(length: offset) { emit(.bodyChunk(slice)) }
                    } else {
                        work.moveReaderIndex(forwardBy: offset)
                    }
                    return
                case .absent:
                    if inBody {
                        if let slice = work.readSlice(length: work.readableBytes) { emit(.bodyChunk(slice)) }
                    } else {
                        work.moveReaderIndex(forwardBy: work.readableBytes)
                    }
                    return
                }
            case .afterDelimiter:
                // RFC 2046 allows linear white space after a delimiter.
                while let byte = work.getInteger(at: work.readerIndex, as: UInt8.self),
                    byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
                {
                    work.moveReaderIndex(forwardBy: 1)
                }
                guard work.readableBytes >= 2, let pair = work.getBytes(at: work.readerIndex, length: 2) else { return }
                if pair == [UInt8(ascii: "-"), UInt8(ascii: "-")] {
                    state = .epilogue
                } else if pair == [13, 10] {
                    work.moveReaderIndex(forwardBy: 2)
                    state = .headers
                } else {
                    throw MultipartParseError(
                        description:
                            "the boundary \"--\(boundary)\" is followed by \(String(decoding: pair, as: UTF8.self).debugDescription), not CRLF or \"--\""
                    )
                }
            case .headers:
                let headerEnd: Int
                let blankLineLength: Int
                if work.getBytes(at: work.readerIndex, length: 2) == [13, 10] {
                    headerEnd = 0
                    blankLineLength = 2
                } else if case .found(let offset) = MultipartStreamParser.search(work, for: [13, 10, 13, 10]) {
                    headerEnd = offset
                    blankLineLength = 4
                } else {
                    if work.readableBytes > MultipartStreamParser.maximumHeaderBytes {
                        throw MultipartParseError(
                            description: "a part's headers exceed \(MultipartStreamParser.maximumHeaderBytes) bytes")
                    }
                    return
                }
                guard headerEnd <= MultipartStreamParser.maximumHeaderBytes else {
                    throw MultipartParseError(
                        description: "a part's headers exceed \(MultipartStreamParser.maximumHeaderBytes) bytes")
                }
                let block = work.readBytes(length: headerEnd) ?? []
                work.moveReaderIndex(forwardBy: blankLineLength)
                emit(.partBegin(try MultipartStreamParser.parseHead(block)))
                state = .body
            case .epilogue:
                work.moveReaderIndex(forwardBy: work.readableBytes)
            }
        }
    }

    private static func parseHead(_ block: [UInt8]) throws -> MultipartPartHead {
        var headers: [(name: String, value: String)] = []
        let text = String(decoding: block, as: UTF8.self)
        for line in text.split(separator: "\r\n", omittingEmptySubsequences: true) {
            if let first = line.first, first == " " || first == "\t", !headers.isEmpty {
                headers[headers.count - 1].value += " " + line.trimmingWhitespace()
                continue
            }
            guard let colon = line.firstIndex(of: ":") else {
                throw MultipartParseError(
                    description: "a part header line has no colon: \(String(line).debugDescription)")
            }
            headers.append(
                (String(line[..<colon]).trimmingWhitespace(), line[line.index(after: colon)...].trimmingWhitespace()))
        }
        var head = MultipartPartHead(headers: headers)
        for header in headers {
            switch header.name.lowercased() {
            case "content-disposition":
                let disposition = HeaderParameters(parsing: header.value)
                head.name = disposition.parameters["name"]
                head.filename = disposition.parameters["filename"]
            case "content-type":
                head.contentType = header.value
            default:
                break
            }
        }
        return head
    }

    private enum SearchResult {
        case found(Int)
        /// A prefix of the needle runs to the end of the buffer at this offset.
        case partial(Int)
        case absent
    }

    private static func search(_ buffer: ByteBuffer, for needle: [UInt8]) -> SearchResult {
        buffer.withUnsafeReadableBytes { haystack -> SearchResult in
            guard let base = haystack.baseAddress, !needle.isEmpty else { return .absent }
            let count = haystack.count
            var start = 0
            return needle.withUnsafeBytes { needleBytes -> SearchResult in
                guard let needleBase = needleBytes.baseAddress else { return .absent }
                while start < count {
                    guard let hit = memchr(base + start, Int32(needle[0]), count - start) else { return .absent }
                    let offset = UnsafeRawPointer(hit) - base
                    let available = Swift.min(needle.count, count - offset)
                    if memcmp(base + offset, needleBase, available) == 0 {
                        return available == needle.count ? .found(offset) : .partial(offset)
                    }
                    start = offset + 1
                }
                return .absent
            }
        }
    }
}

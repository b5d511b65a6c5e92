import CCourierZlib
import NIOCore

/// Undoes a gzip or deflate content coding as a body arrives, in pieces of bounded size, and
/// refuses a body that expands too far (a decompression bomb).
///
/// One body per decoder, read by one task at a time. zlib keeps a pointer back to its stream
/// state, so the state lives in memory of its own that never moves.
final class ContentDecoder {
    /// The most decoded bytes one ``decode(_:)`` returns: however far a chunk expands, memory
    /// holds at most this much of it at a time.
    static let maximumPieceSize = 256 * 1024

    private let coding: ContentCoding
    private let limit: DecompressionLimit
    private let stream: UnsafeMutablePointer<z_stream>
    private var isOpen = false
    /// Encoded bytes received so far (all that ``received(_:)`` was told of), for the ratio.
    private var encodedBytes = 0
    /// Encoded bytes zlib has taken in.
    private var consumedBytes = 0
    private var decodedBytes = 0
    /// True after the coded stream's end, until a further gzip member starts.
    private var reachedEnd = false
    private var triedRawDeflate = false

    /// Makes a decoder for one body.
    /// - Parameter limit: how far the body may expand (see ``DecompressionLimit``).
    /// - Throws: ``ContentDecodingError`` when zlib cannot set up (out of memory).
    init(coding: ContentCoding, limit: DecompressionLimit) throws(ContentDecodingError) {
        self.coding = coding
        self.limit = limit
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 15-bit window, +32: zlib recognises a zlib or a gzip header by itself. "deflate" is
        // meant to be zlib-wrapped (RFC 9110 §8.4.1.2), but some servers send gzip or raw deflate
        // under that name; raw deflate is handled when the header does not parse (see decode).
        let status = CCourierZlib_inflateInit2(stream, 15 + 32)
        guard status == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw ContentDecodingError(.zlibFailure(status))
        }
        isOpen = true
    }

    deinit {
        if isOpen { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Notes `count` more encoded bytes received, before they are decoded.
    func received(_ count: Int) {
        encodedBytes += count
    }

    /// Decodes from the front of `input` into one piece of at most ``maximumPieceSize`` bytes;
    /// what is left undecoded stays in `input`. An empty piece with `input` used up means the
    /// decoder needs more bytes.
    /// - Throws: ``ContentDecodingError``: data that is not in the coding, bytes after its end,
    ///   or a body past the ratio limit.
    func decode(_ input: inout ByteBuffer) throws(ContentDecodingError) -> ByteBuffer {
        var output = ByteBuffer()
        output.reserveCapacity(min(Self.maximumPieceSize, max(16 * 1024, input.readableBytes * 4)))
        while input.readableBytes > 0, output.writableBytes > 0 {
            if reachedEnd {
                // gzip allows several members one after another (RFC 1952 §2.2).
                guard coding == .gzip, input.getInteger(at: input.readerIndex, as: UInt8.self) == 0x1F else {
                    throw ContentDecodingError(.trailingData)
                }
                inflateReset(stream)
                reachedEnd = false
            }
            let step = inflateStep(input, into: &output)
            switch step.status {
            case Z_OK where step.consumed > 0 || step.produced > 0:
                break
            case Z_STREAM_END:
                reachedEnd = true
            case Z_DATA_ERROR where coding == .deflate && !triedRawDeflate && consumedBytes == 0 && decodedBytes == 0:
                // No zlib header: try the same bytes as raw deflate, as browsers and curl do.
                triedRawDeflate = true
                output.clear()
                guard inflateReset2(stream, -15) == Z_OK else { throw ContentDecodingError(.invalidData(nil)) }
                continue
            case Z_DATA_ERROR, Z_NEED_DICT:
                throw ContentDecodingError(.invalidData(stream.pointee.msg.map { String(cString: $0) }))
            case Z_OK, Z_BUF_ERROR:
                // Input and room for output, and zlib moved neither: it never will.
                throw ContentDecodingError(.invalidData("no progress"))
            default:
                throw ContentDecodingError(.zlibFailure(step.status))
            }
            input.moveReaderIndex(forwardBy: step.consumed)
            consumedBytes += step.consumed
            decodedBytes += step.produced
            try checkRatio()
        }
        return output
    }

    /// Checks that the body ended where the coded data did.
    /// - Throws: ``ContentDecodingError`` `.truncated` when the coded data stopped short.
    func finish() throws(ContentDecodingError) {
        // An empty body (HEAD, 204, 304, or a server that sent nothing) has nothing to decode.
        guard reachedEnd || consumedBytes == 0 else { throw ContentDecodingError(.truncated) }
    }

    private func checkRatio() throws(ContentDecodingError) {
        guard decodedBytes > limit.ratioFreeSize else { return }
        let (allowed, overflow) = encodedBytes.multipliedReportingOverflow(by: limit.ratio)
        if !overflow, decodedBytes > allowed { throw ContentDecodingError(.ratioExceeded(limit)) }
    }

    /// One call of `inflate` over all of `input`'s readable bytes into `output`'s free space.
    private func inflateStep(_ input: ByteBuffer, into output: inout ByteBuffer)
        -> (status: Int32, consumed: Int, produced: Int)
    {
        let stream = self.stream
        var status = Z_OK
        var consumed = 0
        let produced = output.writeWithUnsafeMutableBytes(minimumWritableBytes: 0) { free in
            input.withUnsafeReadableBytes { bytes in
                let inCount = min(bytes.count, Int(UInt32.max))
                let outCount = min(free.count, Int(UInt32.max))
                // zlib only reads through next_in; its type is mutable for old C compilers' sake.
                stream.pointee.next_in = UnsafeMutablePointer(
                    mutating: bytes.baseAddress?.assumingMemoryBound(to: Bytef.self))
                stream.pointee.avail_in = uInt(inCount)
                stream.pointee.next_out = free.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(outCount)
                status = inflate(stream, Z_NO_FLUSH)
                consumed = inCount - Int(stream.pointee.avail_in)
                let produced = outCount - Int(stream.pointee.avail_out)
                // No pointers into buffers that are about to be released stay behind.
                stream.pointee.next_in = nil
                stream.pointee.next_out = nil
                stream.pointee.avail_in = 0
                stream.pointee.avail_out = 0
                return produced
            }
        }
        return (status, consumed, produced)
    }
}

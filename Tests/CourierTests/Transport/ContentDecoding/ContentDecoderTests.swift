import Courier
import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import CourierCore
@testable import CourierTestServer

/// Vectors made by Python's zlib and gzip modules (`gzip.compress(text, mtime=0)`,
/// `zlib.compress(text, 9)`, and a raw `compressobj(9, DEFLATED, -15)` stream), decoded through
/// the body wrapper the transport uses, whole and split at every byte.
@Suite("Transport: content decoding (gzip, deflate, bombs)")
struct ContentDecoderTests {
    static let text =
        Array(
            #"{"courier": "decoded", "items": [1, 2, 3], "note": "gzip and deflate, gzip and deflate"}"#.utf8) + [0x0A]

    static let gzip: [UInt8] = [
        0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xAB, 0x56, 0x4A, 0xCE, 0x2F, 0x2D, 0xCA, 0x4C,
        0x2D, 0x52, 0xB2, 0x52, 0x50, 0x4A, 0x49, 0x4D, 0xCE, 0x4F, 0x49, 0x4D, 0x51, 0xD2, 0x51, 0x50, 0xCA, 0x2C,
        0x49, 0xCD, 0x2D, 0x06, 0x8A, 0x45, 0x1B, 0xEA, 0x28, 0x18, 0xE9, 0x28, 0x18, 0xC7, 0x02, 0xC5, 0xF2, 0xF2,
        0x4B, 0x52, 0x41, 0xCA, 0xD2, 0xAB, 0x32, 0x0B, 0x14, 0x12, 0xF3, 0x52, 0x14, 0x52, 0x52, 0xD3, 0x72, 0x12,
        0x4B, 0x52, 0x75, 0x14, 0xD0, 0x45, 0x94, 0x6A, 0xB9, 0x00, 0x55, 0x4D, 0x1E, 0x08, 0x59, 0x00, 0x00, 0x00,
    ]

    /// The deflate data of ``gzip``: the same stream between a zlib header and its Adler-32.
    static let rawDeflate = Array(gzip[10..<(gzip.count - 8)])

    static let zlib: [UInt8] = [0x78, 0xDA] + rawDeflate + [0xCD, 0xFD, 0x1B, 0xCC]

    static let secondMember: [UInt8] = [
        0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x2B, 0x4E, 0x4D, 0xCE, 0xCF, 0x4B, 0x51, 0xC8,
        0x4D, 0xCD, 0x4D, 0x4A, 0x2D, 0xE2, 0x02, 0x00, 0x36, 0x18, 0x4B, 0x0E, 0x0E, 0x00, 0x00, 0x00,
    ]

    static let url = URL(string: "http://127.0.0.1/coded")!

    /// `chunks` as a response body.
    static func body(_ chunks: [[UInt8]]) -> BodyChunks {
        BodyChunks(makeNext: {
            var remaining = chunks[...]
            return { remaining.popFirst().map { ByteBuffer(bytes: $0) } }
        })
    }

    /// Every piece `chunks` decode to, in order.
    /// The decoder's tests use a small ratio-free size (1 MiB), so that a bomb stays small.
    static func decode(
        _ chunks: [[UInt8]], _ coding: ContentCoding, ratioLimit: Int = 100, ratioFreeSize: Int = 1 << 20
    ) async throws -> [ByteBuffer] {
        var pieces: [ByteBuffer] = []
        let limit = DecompressionLimit(ratio: ratioLimit, ratioFreeSize: ratioFreeSize)
        for try await piece in body(chunks).decoded(coding, limit: limit, url: url) { pieces.append(piece) }
        return pieces
    }

    static func decodedBytes(_ chunks: [[UInt8]], _ coding: ContentCoding, ratioLimit: Int = 100) async throws
        -> [UInt8]
    {
        try await decode(chunks, coding, ratioLimit: ratioLimit).flatMap { Array($0.readableBytesView) }
    }

    /// All the bytes a test-server body source produces.
    static func drain(_ source: some ResponseBodySource) -> [UInt8] {
        var bytes: [UInt8] = []
        while case .bytes(let buffer) = source.nextStep() { bytes += buffer.readableBytesView }
        return bytes
    }

    @Test(
        "gzip, zlib-wrapped deflate, raw deflate and gzip sent as deflate decode",
        arguments: [
            (gzip, ContentCoding.gzip), (zlib, .deflate), (rawDeflate, .deflate), (gzip, .deflate),
        ])
    func vectors(_ encoded: [UInt8], _ coding: ContentCoding) async throws {
        #expect(try await Self.decodedBytes([encoded], coding) == Self.text)
    }

    @Test("split at any byte, or a byte at a time, the result is the same", arguments: [ContentCoding.gzip, .deflate])
    func everySplit(_ coding: ContentCoding) async throws {
        let encoded = coding == .gzip ? Self.gzip : Self.zlib
        for split in 0...encoded.count {
            let chunks = [Array(encoded[..<split]), Array(encoded[split...])]
            #expect(try await Self.decodedBytes(chunks, coding) == Self.text, "split at \(split)")
        }
        #expect(try await Self.decodedBytes(encoded.map { [$0] }, coding) == Self.text)
    }

    @Test("gzip members one after another decode to their texts in order (RFC 1952 §2.2)")
    func multipleMembers() async throws {
        let decoded = try await Self.decodedBytes([Self.gzip + Self.secondMember], .gzip)
        #expect(decoded == Self.text + Array("second member\n".utf8))
    }

    @Test("an empty body (HEAD, 204, 304) decodes to nothing, without an error")
    func emptyBody() async throws {
        #expect(try await Self.decode([], .gzip).isEmpty)
    }

    @Test("cut short, followed by stray bytes, or corrupt: contentDecodingFailed, with the reason")
    func badData() async throws {
        let cases: [([UInt8], ContentCoding, ContentDecodingError.Reason?)] = [
            (Array(Self.gzip.dropLast(4)), .gzip, .truncated),
            (Array(Self.zlib.prefix(20)), .deflate, .truncated),
            (Self.zlib + [0x00], .deflate, .trailingData),
            (Self.gzip + Array("junk".utf8), .gzip, .trailingData),
            // The CRC-32 no longer matches: zlib says so.
            (Array(Self.gzip.prefix(Self.gzip.count - 8)) + [0, 0, 0, 0] + Self.gzip.suffix(4), .gzip, nil),
            (Array("not compressed at all".utf8), .gzip, nil),
        ]
        for (encoded, coding, reason) in cases {
            let error = await expectCode(.contentDecodingFailed) {
                try await Self.decode([encoded], coding)
            }
            let underlying = try #require(error?.underlyingError as? ContentDecodingError)
            if let reason {
                #expect(underlying.reason == reason)
            } else if case .invalidData = underlying.reason {
            } else {
                Issue.record("expected invalid data, got \(underlying)")
            }
        }
    }

    @Test("a bomb past the ratio is decompressionLimitExceeded; a raised ratio lets it through", arguments: [1, 64])
    func bomb(chunkCount: Int) async throws {
        // 8 MiB of zeros in about 52 KiB: 158:1.
        let encoded = Self.drain(ZeroRunDeflate(decodedLength: 8 << 20, framing: .gzip))
        let size = (encoded.count + chunkCount - 1) / chunkCount
        let chunks = stride(from: 0, to: encoded.count, by: size).map {
            Array(encoded[$0..<min($0 + size, encoded.count)])
        }
        let error = await expectCode(.decompressionLimitExceeded) {
            try await Self.decode(chunks, .gzip)
        }
        #expect(
            (error?.underlyingError as? ContentDecodingError)?.reason
                == .ratioExceeded(DecompressionLimit(ratio: 100, ratioFreeSize: 1 << 20)))
        let decoded = try await Self.decode(chunks, .gzip, ratioLimit: 1_000)
        #expect(try await Self.decode(chunks, .gzip, ratioFreeSize: 16 << 20).count == decoded.count)
        #expect(
            decoded.reduce(0) { $0 + $1.readableBytes }
                == ZeroRunDeflate(decodedLength: 8 << 20, framing: .gzip).decodedLength)
        // Whole pieces compared (ByteBuffer's == compares memory): byte by byte, 8 MiB took most
        // of a minute under the sanitizers.
        let zeros = ByteBuffer(repeating: 0, count: ContentDecoder.maximumPieceSize)
        #expect(decoded.allSatisfy { $0 == zeros.getSlice(at: 0, length: $0.readableBytes) })
    }

    @Test("the ratio applies only past the ratio-free size: a shorter, very repetitive body decodes")
    func smallRepetitiveBody() async throws {
        let source = ZeroRunDeflate(decodedLength: 1_000_000, framing: .zlib)
        let encoded = Self.drain(source)
        #expect(try await Self.decodedBytes([encoded], .deflate).count == source.decodedLength)
    }

    @Test("one chunk that expands far comes out in pieces of at most 256 KiB")
    func boundedPieces() async throws {
        let source = ZeroRunDeflate(decodedLength: 3 << 20, framing: .gzip)
        let pieces = try await Self.decode([Self.drain(source)], .gzip, ratioLimit: 1_000)
        #expect(pieces.count > 1)
        #expect(pieces.allSatisfy { $0.readableBytes <= ContentDecoder.maximumPieceSize })
        #expect(pieces.reduce(0) { $0 + $1.readableBytes } == source.decodedLength)
    }

    @Test(
        "Content-Encoding: exactly one of gzip, x-gzip or deflate is decoded; anything else is left as sent",
        arguments: [
            (["gzip"], ContentCoding.gzip), (["GZip"], .gzip), (["x-gzip"], .gzip), ([" deflate "], .deflate),
            (["identity, gzip"], .gzip), (["identity", "deflate"], .deflate), ([], nil), (["identity"], nil),
            (["br"], nil), (["gzip, br"], nil), (["gzip, gzip"], nil), (["gzip", "deflate"], nil), ([""], nil),
        ] as [([String], ContentCoding?)])
    func codingFromHeader(_ values: [String], _ expected: ContentCoding?) {
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        for value in values { fields.append(HTTPField(name: .contentEncoding, value: value)) }
        #expect(ContentCoding(fields) == expected)
    }
}

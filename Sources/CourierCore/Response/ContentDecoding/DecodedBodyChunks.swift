import Foundation
import NIOCore

extension BodyChunks {
    /// This body with `coding` undone as it is read: the decoding runs on the reading task, one
    /// piece per read, so a slow reader holds back the encoded bytes (and the socket) rather
    /// than a pile of decoded ones.
    /// - Parameter url: the request's URL, for the errors.
    func decoded(_ coding: ContentCoding, limit: DecompressionLimit, url: URL) -> BodyChunks {
        BodyChunks(makeIterator: {
            var decoding = DecodingIterator(upstream: makeAsyncIterator(), coding: coding, limit: limit)
            return AsyncIterator {
                do {
                    return try await decoding.next()
                } catch let error as ContentDecodingError {
                    throw error.courierError(url: url)
                }
            }
        })
    }
}

extension TransportResponse {
    /// A response whose body has its content coding undone as it is read when `head` names gzip
    /// or deflate in `Content-Encoding` (``bodyIsDecoded`` is then true), else `body` as it
    /// arrived: the decoding every transport may offer, under a bound against decompression
    /// bombs: past `ratioFreeSize` decoded bytes, at most `ratioLimit` decoded bytes per encoded
    /// byte received. Reading the body throws ``CourierError`` `.decompressionLimitExceeded` past
    /// the bound and `.contentDecodingFailed` for bytes that do not decode.
    public init(
        head: ResponseHead, decoding body: BodyChunks, ratioLimit: Int, ratioFreeSize: Int,
        raiseReadAhead: (@Sendable (Int) -> Void)? = nil
    ) {
        guard let coding = ContentCoding(head.headerFields) else {
            self.init(head: head, body: body, raiseReadAhead: raiseReadAhead)
            return
        }
        let limit = DecompressionLimit(ratio: ratioLimit, ratioFreeSize: ratioFreeSize)
        self.init(
            head: head, body: body.decoded(coding, limit: limit, url: head.url), bodyIsDecoded: true,
            raiseReadAhead: raiseReadAhead)
    }
}

extension ContentDecodingError {
    /// This error as a Courier error: `.decompressionLimitExceeded` for a body past the ratio,
    /// else `.contentDecodingFailed`.
    func courierError(url: URL) -> CourierError {
        let target = url.absoluteString
        if case .ratioExceeded(let limit) = reason {
            return CourierError(
                .decompressionLimitExceeded,
                "the response from \(target) decoded past \(limit.ratioFreeSize) bytes at more than \(limit.ratio) bytes per encoded byte: refusing what looks like a decompression bomb (raise Configuration.decompressionRatioLimit or decompressionRatioFreeSize, or send Accept-Encoding: identity to get the body as sent)",
                offendingInput: target, underlyingError: self)
        }
        return CourierError(
            .contentDecodingFailed,
            "the response body from \(target) does not decode as its Content-Encoding says: \(self)",
            offendingInput: target, underlyingError: self)
    }
}

/// Pulls encoded chunks from a body and hands out decoded pieces of at most
/// ``ContentDecoder/maximumPieceSize`` bytes.
private struct DecodingIterator {
    private var upstream: BodyChunks.AsyncIterator
    private let coding: ContentCoding
    private let limit: DecompressionLimit
    /// Made with the first chunk, so an empty body costs no zlib state.
    private var decoder: ContentDecoder?
    /// Encoded bytes received and not yet decoded.
    private var pending = ByteBuffer()
    private var isFinished = false

    init(upstream: BodyChunks.AsyncIterator, coding: ContentCoding, limit: DecompressionLimit) {
        self.upstream = upstream
        self.coding = coding
        self.limit = limit
    }

    /// The next decoded piece, or nil after the body's end.
    /// - Throws: ``ContentDecodingError``, or the body's own error.
    mutating func next() async throws -> ByteBuffer? {
        guard !isFinished else { return nil }
        while true {
            if let decoder, pending.readableBytes > 0 {
                let piece = try decoder.decode(&pending)
                // Empty only once the pending bytes are used up: then read on.
                if piece.readableBytes > 0 { return piece }
                continue
            }
            guard let chunk = try await upstream.next() else {
                isFinished = true
                try decoder?.finish()
                return nil
            }
            let decoder = try decoder ?? ContentDecoder(coding: coding, limit: limit)
            self.decoder = decoder
            decoder.received(chunk.readableBytes)
            pending = chunk
        }
    }
}

import Foundation
import HTTPTypes

/// A content coding that the transport undoes (RFC 9110 §8.4.1).
enum ContentCoding: Sendable, Equatable {
    case gzip
    case deflate

    /// The coding `fields` name in `Content-Encoding` when it is exactly one of `gzip`, `x-gzip`
    /// or `deflate` (`identity` entries aside); nil when there is none, or when it is one the
    /// transport leaves as sent (`br`, `zstd`, a chain of several), so that the caller gets the
    /// bytes with the header that explains them.
    init?(_ fields: HTTPFields) {
        var found: ContentCoding?
        var count = 0
        for field in fields where field.name.matches(.contentEncoding) {
            for token in field.value.split(separator: ",") {
                switch token.trimmingCharacters(in: .whitespaces).lowercased() {
                case "", "identity": continue
                case "gzip", "x-gzip": found = .gzip
                case "deflate": found = .deflate
                default: return nil
                }
                count += 1
            }
        }
        guard count == 1, let found else { return nil }
        self = found
    }
}

/// Why a coded response body could not be decoded.
struct ContentDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Reason: Sendable, Equatable {
        /// Decoded bytes passed the limit's size, then its ratio to the encoded bytes received.
        case ratioExceeded(DecompressionLimit)
        /// The bytes are not in the coding; zlib's message when it gave one.
        case invalidData(String?)
        /// The body ended before the coded data did.
        case truncated
        /// Bytes followed the end of the coded data.
        case trailingData
        /// zlib failed for a reason of its own (out of memory), with its status.
        case zlibFailure(Int32)
    }

    var reason: Reason

    init(_ reason: Reason) { self.reason = reason }

    var description: String {
        switch reason {
        case .ratioExceeded(let limit):
            "decoded past \(limit.ratioFreeSize) bytes at more than \(limit.ratio) bytes per encoded byte"
        case .invalidData(let message): "the data is not in its coding" + (message.map { " (\($0))" } ?? "")
        case .truncated: "the body ended before its coded data did"
        case .trailingData: "bytes follow the end of the coded data"
        case .zlibFailure(let status): "zlib failed with status \(status)"
        }
    }
}

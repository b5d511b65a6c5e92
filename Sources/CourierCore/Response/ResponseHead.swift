import Foundation
import HTTPTypes

/// The status line and headers of a response, with the URL that produced it.
///
/// A small value type in the manner of `HTTPURLResponse`, built on swift-http-types so that
/// header lookups are case-insensitive (RFC 9110 §5.1).
public struct ResponseHead: Sendable, Hashable {
    /// The status code and reason phrase.
    public var status: HTTPResponse.Status
    /// The header fields, in the order the server sent them.
    public var headerFields: HTTPFields
    /// The URL of the request that this response answers (after any redirects).
    public var url: URL
    /// The HTTP version the response arrived in (`HTTP/1.1`, `HTTP/2`); nil when the transport
    /// did not say.
    public var httpVersion: HTTPProtocolVersion?

    /// Makes a response head.
    public init(
        status: HTTPResponse.Status, headerFields: HTTPFields = [:], url: URL, httpVersion: HTTPProtocolVersion? = nil
    ) {
        self.status = status
        self.headerFields = headerFields
        self.url = url
        self.httpVersion = httpVersion
    }

    /// The status code as an integer, such as 200.
    public var statusCode: Int { status.code }

    /// The first value of a header field, matched case-insensitively; nil when absent or not a valid name.
    public func value(forHTTPHeaderField name: String) -> String? {
        guard let fieldName = HTTPField.Name(name) else { return nil }
        return headerFields[fieldName]
    }

    /// The declared body length from `Content-Length`, when present and valid: digits with
    /// optional blanks around them, and no overflow.
    /// Read on every response, so it parses the bytes in one pass rather than trimming through
    /// NSString or slicing substrings.
    public var expectedContentLength: Int64? { declaredBody.length }

    /// True when a `Content-Encoding` field names a coding other than `identity`, so that
    /// `Content-Length` counts encoded bytes.
    var hasContentCoding: Bool { declaredBody.isCoded }

    /// ``expectedContentLength`` and ``hasContentCoding`` in one pass over the fields: a body's
    /// reader and its metrics ask for both on every response.
    var declaredBody: (length: Int64?, isCoded: Bool) {
        // One pass rather than `headerFields[.contentLength]`, which builds a joined string
        // through lazy sequences (about 1.5 µs a lookup). Two length fields, even equal ones,
        // are no valid length here, as their joined form ("5, 5") was not.
        var text: String?
        var lengthFields = 0
        var isCoded = false
        for field in headerFields {
            if field.name.matches(.contentLength) {
                lengthFields += 1
                text = field.value
            } else if !isCoded, field.name.matches(.contentEncoding) {
                isCoded = !field.value.utf8.elementsEqual("identity".utf8, by: { $0 | 0x20 == $1 })
            }
        }
        return (lengthFields == 1 ? text.flatMap(Self.contentLength) : nil, isCoded)
    }

    static func contentLength(_ text: String) -> Int64? {
        // Over the bytes in place: through `utf8`'s iterator a three-digit length cost about 225
        // instructions, here about 100.
        var text = text
        return text.withUTF8(contentLength(bytes:))
    }

    private static func contentLength(bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var value: Int64 = 0
        var sawDigit = false
        var sawBlankAfterDigits = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"):
                if sawDigit { sawBlankAfterDigits = true }
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if sawBlankAfterDigits { return nil }
                sawDigit = true
                let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
                let (sum, carried) = shifted.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
                if overflowed || carried { return nil }
                value = sum
            default:
                return nil
            }
        }
        return sawDigit ? value : nil
    }

    /// The media type of `Content-Type` without parameters, lower-cased (`application/json`).
    public var mimeType: String? {
        guard let contentType = value(forHTTPHeaderField: "Content-Type") else { return nil }
        let type = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? contentType
        let trimmed = type.trimmingCharacters(in: .whitespaces).lowercased()
        return trimmed.isEmpty ? nil : trimmed
    }
}

extension HTTPField.Name {
    /// `self == name`, the lengths compared first: a scan of a response's fields for one name
    /// meets mostly names of other lengths, and each string compare costs about 45 instructions.
    func matches(_ name: HTTPField.Name) -> Bool {
        canonicalName.utf8.count == name.canonicalName.utf8.count && self == name
    }
}

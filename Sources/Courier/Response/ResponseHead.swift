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

    /// Makes a response head.
    public init(status: HTTPResponse.Status, headerFields: HTTPFields = [:], url: URL) {
        self.status = status
        self.headerFields = headerFields
        self.url = url
    }

    /// The status code as an integer, such as 200.
    public var statusCode: Int { status.code }

    /// The first value of a header field, matched case-insensitively; nil when absent or not a valid name.
    public func value(forHTTPHeaderField name: String) -> String? {
        guard let fieldName = HTTPField.Name(name) else { return nil }
        return headerFields[fieldName]
    }

    /// The declared body length from `Content-Length`, when present and valid.
    /// Read on every response, so it parses the digits directly rather than trimming through NSString.
    public var expectedContentLength: Int64? {
        guard let text = headerFields[.contentLength] else { return nil }
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var digits = Substring(text).utf8
        while let first = digits.first, isBlank(first) { digits.removeFirst() }
        while let last = digits.last, isBlank(last) { digits.removeLast() }
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int64(Substring(digits))
    }

    /// The media type of `Content-Type` without parameters, lower-cased (`application/json`).
    public var mimeType: String? {
        guard let contentType = value(forHTTPHeaderField: "Content-Type") else { return nil }
        let type = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? contentType
        let trimmed = type.trimmingCharacters(in: .whitespaces).lowercased()
        return trimmed.isEmpty ? nil : trimmed
    }
}

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
    public var expectedContentLength: Int64? {
        value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// The media type of `Content-Type` without parameters, lower-cased (`application/json`).
    public var mimeType: String? {
        guard let contentType = value(forHTTPHeaderField: "Content-Type") else { return nil }
        let type = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? contentType
        let trimmed = type.trimmingCharacters(in: .whitespaces).lowercased()
        return trimmed.isEmpty ? nil : trimmed
    }
}

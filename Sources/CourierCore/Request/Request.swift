import Foundation
import HTTPTypes

/// An HTTP request as a value: method, URL, header fields, a replayable body and options.
///
/// What serializers build and transports send. Being a value, it can be copied and changed
/// freely from any task; the body describes how to produce its bytes rather than holding a
/// consumed stream, so redirects and retries can send it again.
public struct Request: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The absolute URL to send the request to.
    public var url: URL
    /// The header fields, matched case-insensitively.
    public var headerFields: HTTPFields
    /// The body and how to produce its bytes.
    public var body: RequestBody
    /// The whole-request deadline in seconds, response body included; nil (or a value that is
    /// not finite) uses the transport's default. Past it the task fails with `.timedOut`.
    public var timeoutInterval: TimeInterval?
    /// Whether a session's cookie storage is applied to and filled from this request.
    public var httpShouldHandleCookies: Bool
    /// How this request uses its session's ``HTTPCache``, if the session has one.
    public var cachePolicy: CachePolicy = .automatic

    /// Makes a request.
    public init(
        method: HTTPMethod = .get,
        url: URL,
        headerFields: HTTPFields = [:],
        body: RequestBody = .empty,
        timeoutInterval: TimeInterval? = nil,
        httpShouldHandleCookies: Bool = true
    ) {
        self.method = method
        self.url = url
        self.headerFields = headerFields
        self.body = body
        self.timeoutInterval = timeoutInterval
        self.httpShouldHandleCookies = httpShouldHandleCookies
    }

    /// The first value of the header `name`, matched case-insensitively; nil when absent.
    public func value(forHTTPHeaderField name: String) -> String? {
        guard let fieldName = HTTPField.Name(name) else { return nil }
        return headerFields[fieldName]
    }

    /// Replaces every value of the header `name` with `value`; nil removes the header.
    /// - Throws: ``CourierError`` `.invalidHeader` when the name is not a token or the value has CR, LF or NUL.
    public mutating func setValue(_ value: String?, forHTTPHeaderField name: String) throws {
        let fieldName = try HeaderField.fieldName(name)
        if let value {
            headerFields[fieldName] = try HeaderField.checkedValue(value, for: name)
        } else {
            headerFields[fieldName] = nil
        }
    }

    /// Adds a value for `name`, keeping the values already present.
    /// - Throws: ``CourierError`` `.invalidHeader` when the name is not a token or the value has CR, LF or NUL.
    public mutating func addValue(_ value: String, forHTTPHeaderField name: String) throws {
        headerFields.append(try HeaderField.make(name: name, value: value))
    }
}

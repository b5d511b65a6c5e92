import HTTPTypes

/// An HTTP request method: swift-http-types' `HTTPRequest.Method`, one of the standard ones
/// (`.get`, `.post`, …) or any other RFC 9110 token (`HTTPMethod("PURGE")`).
///
/// Methods are case-sensitive (RFC 9110 §9.1); the standard ones are upper case. Courier uses
/// swift-http-types' type rather than one of its own, so that a method passes between Courier,
/// `HTTPRequest` and the OpenAPI runtime unchanged. `init?(_:)` validates the token as
/// RFC 9110 §5.6.2 says (one or more `tchar`); Courier adds `init(validating:)`, which throws
/// Courier's typed error instead of returning nil, and `isIdempotent`.
public typealias HTTPMethod = HTTPRequest.Method

extension HTTPRequest.Method {
    /// Validates `rawValue` as an RFC 9110 token (§5.6.2), as `init?(_:)` does.
    /// - Throws: ``CourierError`` with code ``CourierError/Code/invalidMethod`` that quotes the input.
    public init(validating rawValue: String) throws {
        guard let method = HTTPRequest.Method(rawValue) else {
            throw CourierError(
                .invalidMethod, "\"\(rawValue)\" is not a valid HTTP method token (RFC 9110 §9.1)",
                offendingInput: rawValue)
        }
        self = method
    }

    /// True for methods that RFC 9110 §9.2.2 calls idempotent (retries may resend them).
    public var isIdempotent: Bool {
        switch rawValue {
        case "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE": return true
        default: return false
        }
    }
}

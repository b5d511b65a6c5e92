import Foundation
import HTTPTypes

/// Where a session keeps cookies between requests (the role of `HTTPCookieStorage`).
///
/// A ``SessionManager`` calls ``cookies(for:)`` before every request it sends, redirect hops
/// included, and ``setCookies(_:receivedFrom:)`` after every response head. Both are called
/// from many tasks at once, so implementations must be thread-safe. ``CookieJar`` is the
/// in-memory implementation.
public protocol CookieStorage: Sendable {
    /// The unexpired cookies to send to `url`, in `Cookie` header order (RFC 6265 §5.4:
    /// longer paths first, then earlier creation first).
    func cookies(for url: URL) -> [Cookie]

    /// Stores cookies that a response to `url` set, in the order the server sent them: each
    /// replaces a stored cookie with the same name, domain and path, and an expired one only
    /// deletes (RFC 6265 §5.3 steps 11 and 12).
    func setCookies(_ cookies: [Cookie], receivedFrom url: URL)
}

extension CookieStorage {
    /// The `Cookie` header value for `url` (`a=1; b=2`), or nil when no cookie applies.
    public func cookieHeaderValue(for url: URL) -> String? {
        Cookie.headerValue(for: cookies(for: url))
    }

    /// Parses every `Set-Cookie` field of a response to `url` and stores the cookies the RFC
    /// accepts; a malformed field is skipped, never an error.
    /// - Parameters:
    ///   - headerFields: the response's header fields.
    ///   - url: the URL of the request the response answers.
    ///   - now: the time of receipt.
    public func setCookies(
        fromResponseHeaderFields headerFields: HTTPFields, receivedFrom url: URL, at now: Date = Date()
    ) {
        let values = headerFields[values: .setCookie]
        guard !values.isEmpty else { return }
        let cookies = values.compactMap { Cookie(setCookie: $0, receivedFrom: url, at: now) }
        guard !cookies.isEmpty else { return }
        setCookies(cookies, receivedFrom: url)
    }
}

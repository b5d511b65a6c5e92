import Foundation

/// One HTTP cookie as a user agent stores it (RFC 6265 §5.3), the Swift counterpart of
/// `HTTPCookie`.
///
/// Cookies come from a server's `Set-Cookie` field through
/// ``init(setCookie:receivedFrom:at:)``, from a cookies.txt file, or from
/// ``init(name:value:domain:hostOnly:path:expires:secure:httpOnly:sameSite:creationDate:)``.
/// A ``CookieStorage`` keeps them and picks the ones a request URL should carry.
public struct Cookie: Sendable, Hashable, CustomStringConvertible {
    /// The `SameSite` attribute (RFC 6265bis §4.1.2.7).
    ///
    /// Courier records it but does not act on it: a client library has no notion of the
    /// "site" a request comes from.
    public enum SameSite: String, Sendable, Hashable, CaseIterable {
        /// Sent only with same-site requests.
        case strict = "Strict"
        /// Sent with same-site requests and top-level navigations.
        case lax = "Lax"
        /// Sent with every request (browsers require `Secure` with it).
        case none = "None"
    }

    /// The cookie's name; not empty.
    public var name: String
    /// The cookie's value, possibly empty.
    public var value: String
    /// The host (``hostOnly``) or domain the cookie belongs to: lower-case, without a leading dot.
    public var domain: String
    /// True when the cookie goes to ``domain`` exactly; false when it also goes to its subdomains
    /// (the server sent a `Domain` attribute).
    public var hostOnly: Bool
    /// The path prefix the request path must match (RFC 6265 §5.1.4); starts with `/`.
    public var path: String
    /// When the cookie expires; nil for a session cookie, which lives as long as its storage.
    public var expires: Date?
    /// Sent over https only.
    public var secure: Bool
    /// Hidden from scripts in a browser; Courier, being an HTTP client, sends it like any other.
    public var httpOnly: Bool
    /// The `SameSite` attribute, or nil when the server sent none or an unknown value.
    public var sameSite: SameSite?
    /// When the cookie was first stored; a replacement keeps the original's (RFC 6265 §5.3
    /// step 11.3), and it orders cookies of equal path length in a `Cookie` header.
    public var creationDate: Date

    /// Makes a cookie from its parts, as a program (or a cookies.txt line) states them.
    ///
    /// `domain` is lower-cased and loses a leading dot; an empty `path` becomes `/`.
    /// - Throws: ``CourierError`` `.invalidCookie` when the name is empty, either the name or the
    ///   value has a control character or `;`, the name has `=`, the domain is empty or has a
    ///   character a host cannot have, or the path does not start with `/`.
    public init(
        name: String, value: String, domain: String, hostOnly: Bool = true, path: String = "/",
        expires: Date? = nil, secure: Bool = false, httpOnly: Bool = false, sameSite: SameSite? = nil,
        creationDate: Date = Date()
    ) throws {
        let description = "\(name)=\(value)"
        guard !name.isEmpty, !name.utf8.contains(UInt8(ascii: "=")), Self.isCookieText(name) else {
            throw CourierError(
                .invalidCookie,
                "the cookie name \"\(HeaderField.escaped(name))\" is empty or has '=', ';' or a control character",
                offendingInput: description)
        }
        guard Self.isCookieText(value) else {
            throw CourierError(
                .invalidCookie,
                "the value of cookie \"\(name)\" has ';' or a control character: \"\(HeaderField.escaped(value))\"",
                offendingInput: description)
        }
        let canonicalDomain = CookieMatching.canonicalDomain(domain)
        guard CookieMatching.isPlausibleHost(canonicalDomain) else {
            throw CourierError(
                .invalidCookie,
                "the domain \"\(HeaderField.escaped(domain))\" of cookie \"\(name)\" is not a host name",
                offendingInput: domain)
        }
        let path = path.isEmpty ? "/" : path
        guard path.hasPrefix("/"), !path.utf8.contains(where: CookieMatching.isControlOrSemicolon) else {
            throw CourierError(
                .invalidCookie,
                "the path \"\(HeaderField.escaped(path))\" of cookie \"\(name)\" does not start with '/' or has ';' or a control character",
                offendingInput: path)
        }
        self.init(
            unchecked: name, value: value, domain: canonicalDomain, hostOnly: hostOnly, path: path, expires: expires,
            secure: secure, httpOnly: httpOnly, sameSite: sameSite, creationDate: creationDate)
    }

    /// Makes a cookie from parts the caller has already validated.
    init(
        unchecked name: String, value: String, domain: String, hostOnly: Bool, path: String, expires: Date?,
        secure: Bool, httpOnly: Bool, sameSite: SameSite?, creationDate: Date
    ) {
        self.name = name
        self.value = value
        self.domain = domain
        self.hostOnly = hostOnly
        self.path = path
        self.expires = expires
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
        self.creationDate = creationDate
    }

    /// True when the cookie has an expiry at or before `date`.
    public func isExpired(at date: Date) -> Bool {
        guard let expires else { return false }
        return expires <= date
    }

    /// True when the cookie should be sent to `url` (RFC 6265 §5.4 step 1): the host matches
    /// the domain (exactly when ``hostOnly``), the path matches, and a ``secure`` cookie only
    /// goes to https. Expiry is not checked here.
    public func matches(_ url: URL) -> Bool {
        guard let host = CookieMatching.canonicalHost(of: url) else { return false }
        if hostOnly {
            guard host == domain else { return false }
        } else {
            guard CookieMatching.domain(host, matches: domain) else { return false }
        }
        if secure && !CookieMatching.isSecureScheme(url) { return false }
        return CookieMatching.path(CookieMatching.requestPath(of: url), matches: path)
    }

    /// `name=value`, the form a `Cookie` header carries.
    public var headerPair: String { "\(name)=\(value)" }

    /// `name=value` and the attributes, in `Set-Cookie` syntax (for logs and debugging).
    public var description: String {
        var text = headerPair
        if !hostOnly { text += "; Domain=\(domain)" }
        text += "; Path=\(path)"
        if let expires { text += "; Expires=\(Self.httpDate(expires))" }
        if secure { text += "; Secure" }
        if httpOnly { text += "; HttpOnly" }
        if let sameSite { text += "; SameSite=\(sameSite.rawValue)" }
        return text
    }

    /// The `Cookie` header value for `cookies`, in the given order: `a=1; b=2`; nil when empty.
    public static func headerValue(for cookies: [Cookie]) -> String? {
        guard !cookies.isEmpty else { return nil }
        return cookies.map(\.headerPair).joined(separator: "; ")
    }

    /// No control character (HTAB allowed, as RFC 6265bis §5.6 step 2) and no `;`.
    static func isCookieText(_ text: String) -> Bool {
        !text.utf8.contains(where: CookieMatching.isControlOrSemicolon)
    }

    private static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

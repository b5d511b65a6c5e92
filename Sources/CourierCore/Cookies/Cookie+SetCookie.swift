import Foundation

extension Cookie {
    /// The largest name plus value a cookie may have, in bytes (RFC 6265bis §5.6 step 4);
    /// RFC 6265 §6.1 asks user agents to support at least this much.
    public static let maximumNameAndValueBytes = 4096
    /// The largest attribute value that is read, in bytes; a longer one is skipped (RFC 6265bis §5.6).
    public static let maximumAttributeValueBytes = 1024

    /// Parses a `Set-Cookie` field value received in a response to `url`, by RFC 6265 §5.2 and
    /// the storage rules of §5.3; nil when the RFC says to ignore the cookie.
    ///
    /// Attribute names are case-insensitive and unknown ones are skipped. `Max-Age` wins over
    /// `Expires` whatever their order; a `Max-Age` of zero or less, or an `Expires` in the past,
    /// yields an already expired cookie, which a ``CookieStorage`` treats as a deletion. Without
    /// `Domain` the cookie is host-only; a `Domain` that `url`'s host does not domain-match
    /// (§5.1.3), or that is a single label such as `com` (Courier's stand-in for a public suffix
    /// list), makes the whole cookie ignored. Without a valid `Path` the path is the default
    /// path of `url` (§5.1.4). The `__Secure-` and `__Host-` name prefixes are enforced as
    /// RFC 6265bis §4.1.3 asks.
    ///
    /// Never throws and never traps: malformed input, control characters, or a name and value
    /// over ``maximumNameAndValueBytes`` give nil.
    /// - Parameters:
    ///   - setCookie: one `Set-Cookie` field value.
    ///   - url: the URL of the request the response answers.
    ///   - now: the time of receipt, which `Max-Age` counts from and which becomes ``creationDate``.
    public init?(setCookie: String, receivedFrom url: URL, at now: Date = Date()) {
        guard let parsed = SetCookieParser(setCookie),
            parsed.name.utf8.count + parsed.value.utf8.count <= Self.maximumNameAndValueBytes,
            Self.isCookieText(parsed.name), Self.isCookieText(parsed.value),
            let host = CookieMatching.canonicalHost(of: url)
        else { return nil }

        var expires: Date?
        var maxAgeExpiry: Date?
        var domainAttribute = ""
        var path: String?
        var secure = false
        var httpOnly = false
        var sameSite: SameSite?

        // Each recognised attribute overwrites an earlier one of its name: §5.3 reads "the last
        // attribute in the cookie-attribute-list" with that name.
        for attribute in parsed.attributes where attribute.value.utf8.count <= Self.maximumAttributeValueBytes {
            switch attribute.name.lowercased() {
            case "expires":
                if let date = CookieDate.parse(attribute.value) { expires = date }
            case "max-age":
                if let seconds = Self.maxAgeSeconds(attribute.value) {
                    maxAgeExpiry = seconds <= 0 ? Date.distantPast : Self.adding(seconds, to: now)
                }
            case "domain":
                // An empty Domain is ignored rather than meaning "this host" (§5.2.3).
                if !attribute.value.isEmpty { domainAttribute = CookieMatching.canonicalDomain(attribute.value) }
            case "path":
                path = attribute.value.hasPrefix("/") ? attribute.value : nil
            case "secure":
                secure = true
            case "httponly":
                httpOnly = true
            case "samesite":
                sameSite = SameSite.allCases.first { $0.rawValue.lowercased() == attribute.value.lowercased() }
            default:
                continue
            }
        }

        // §5.3 steps 5 and 6: Domain.
        let hostOnly: Bool
        let domain: String
        if !domainAttribute.isEmpty {
            guard CookieMatching.isPlausibleHost(domainAttribute) else { return nil }
            if CookieMatching.isPublicSuffix(domainAttribute) {
                guard domainAttribute == host else { return nil }
                hostOnly = true
                domain = host
            } else {
                guard CookieMatching.domain(host, matches: domainAttribute) else { return nil }
                hostOnly = false
                domain = domainAttribute
            }
        } else {
            hostOnly = true
            domain = host
        }
        let cookiePath = path.flatMap { Self.isCookieText($0) ? $0 : nil } ?? CookieMatching.defaultPath(of: url)

        // RFC 6265bis §4.1.3: names that promise a secure origin must keep the promise.
        let lowercasedName = parsed.name.lowercased()
        if lowercasedName.hasPrefix("__secure-") || lowercasedName.hasPrefix("__host-") {
            guard secure, CookieMatching.isSecureScheme(url) else { return nil }
            if lowercasedName.hasPrefix("__host-") {
                guard hostOnly, cookiePath == "/" else { return nil }
            }
        }

        self.init(
            unchecked: parsed.name, value: parsed.value, domain: domain, hostOnly: hostOnly, path: cookiePath,
            expires: maxAgeExpiry ?? expires, secure: secure, httpOnly: httpOnly, sameSite: sameSite,
            creationDate: now)
    }

    /// §5.2.2: an optional `-` then digits only; anything else means the attribute is skipped.
    /// Values too large for `Int64` saturate rather than fail.
    private static func maxAgeSeconds(_ text: String) -> Int64? {
        var digits = Substring(text)
        let negative = digits.first == "-"
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let magnitude = Int64(digits) ?? Int64.max
        return negative ? -magnitude : magnitude
    }

    private static func adding(_ seconds: Int64, to date: Date) -> Date {
        let expiry = date.addingTimeInterval(TimeInterval(seconds))
        return min(expiry, Date.distantFuture)
    }
}

import Foundation

/// The host, domain and path rules of RFC 6265 §5.1.2–§5.1.4, on canonical (lower-case) strings.
enum CookieMatching {
    /// The request host, lower-cased, without IPv6 brackets; nil for a URL with no host.
    static func canonicalHost(of url: URL) -> String? {
        guard let host = url.host, !host.isEmpty else { return nil }
        return canonicalDomain(host)
    }

    /// Lower-cased, without a leading dot (RFC 6265 §5.2.3) or IPv6 brackets.
    static func canonicalDomain(_ text: String) -> String {
        var domain = Substring(text.lowercased())
        if domain.first == "." { domain = domain.dropFirst() }
        if domain.first == "[", domain.last == "]" { domain = domain.dropFirst().dropLast() }
        return String(domain)
    }

    /// Letters, digits, `-`, `.`, `_`, `:` (IPv6) and non-ASCII (an IDN not yet in punycode);
    /// anything else in a cookie's domain would be a mistake or an injection attempt.
    static func isPlausibleHost(_ host: String) -> Bool {
        guard !host.isEmpty else { return false }
        return host.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"), 0x80...0xFF:
                return true
            default:
                return false
            }
        }
    }

    /// An IPv6 literal, or an IPv4 literal (digits and dots only): such hosts match a domain
    /// only when identical (RFC 6265 §5.1.3).
    static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || host.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: ".") }
    }

    /// RFC 6265 §5.1.3: identical, or `host` ends with `.` + `domain` and is a host name, not an IP.
    static func domain(_ host: String, matches domain: String) -> Bool {
        // Byte comparisons throughout: String's `==` and `hasSuffix` use canonical equivalence,
        // which would match bytes the server never sent.
        let hostBytes = host.utf8
        let domainBytes = domain.utf8
        if hostBytes.elementsEqual(domainBytes) { return true }
        guard hostBytes.count > domainBytes.count, hostBytes.suffix(domainBytes.count).elementsEqual(domainBytes),
            !isIPAddress(host)
        else { return false }
        return hostBytes.dropLast(domainBytes.count).last == UInt8(ascii: ".")
    }

    /// Courier carries no public suffix list; a single label (`com`, `localhost`) stands in for
    /// one, which stops the worst case (a cookie for a whole top-level domain) without a table
    /// that would go stale. `co.uk`-style suffixes are not caught.
    static func isPublicSuffix(_ domain: String) -> Bool {
        !domain.contains(".") && !domain.contains(":")
    }

    /// The percent-encoded path of `url`, `/` when empty (what §5.4 matches cookie paths against).
    static func requestPath(of url: URL) -> String {
        let path = url.path(percentEncoded: true)
        return path.isEmpty ? "/" : path
    }

    /// RFC 6265 §5.1.4 default-path: the request path up to, not including, its last `/`;
    /// `/` when that would be empty or the path does not start with `/`.
    static func defaultPath(of url: URL) -> String {
        let path = url.path(percentEncoded: true)
        guard path.hasPrefix("/"), let lastSlash = path.lastIndex(of: "/"), lastSlash != path.startIndex else {
            return "/"
        }
        return String(path[..<lastSlash])
    }

    /// RFC 6265 §5.1.4 path-match: identical; or `cookiePath` is a prefix that ends in `/`, or
    /// is followed in `requestPath` by `/`.
    static func path(_ requestPath: String, matches cookiePath: String) -> Bool {
        let request = requestPath.utf8
        let cookie = cookiePath.utf8
        guard request.count >= cookie.count, request.prefix(cookie.count).elementsEqual(cookie) else { return false }
        if request.count == cookie.count || cookie.last == UInt8(ascii: "/") { return true }
        return request.dropFirst(cookie.count).first == UInt8(ascii: "/")
    }

    /// Schemes over which `Secure` cookies may travel.
    static func isSecureScheme(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "https", "wss": return true
        default: return false
        }
    }

    /// Control characters (HTAB excepted) and `;`, which no cookie name, value or path may hold.
    static func isControlOrSemicolon(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != 0x09) || byte == 0x7F || byte == UInt8(ascii: ";")
    }
}

// Standard library only: Fuzz/ compiles this folder alone with swiftc.

/// A `Location` header value (RFC 9110 §10.2.2) and its resolution against the request URL,
/// at the string level, per RFC 3986 §5.2.
///
/// ```swift
/// let location = LocationValue("../b?x=1")
/// location?.resolved(against: "http://h/a/c/d")   // "http://h/a/b?x=1"
/// ```
///
/// Control characters (and so CR, LF, NUL) make the value invalid. Spaces and non-ASCII bytes,
/// which some servers send unencoded, are percent-encoded so the result is a valid URI.
public struct LocationValue: Sendable, Hashable {
    /// The URI reference, with surrounding whitespace removed and unsafe bytes percent-encoded.
    public var reference: String

    /// Parses a header value; nil when it is empty or contains a control character.
    public init?(_ headerValue: String) {
        let trimmed = Self.trimmingWhitespace(Array(headerValue.utf8))
        guard !trimmed.isEmpty, !trimmed.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
        reference = Self.percentEncodingUnsafeBytes(trimmed)
    }

    /// Resolves the reference against `baseURL` (an absolute URI such as the request URL).
    ///
    /// Returns nil when `baseURL` has no scheme, or when the reference starts with something
    /// scheme-like that is not a valid scheme (`a%20b:c`, which RFC 3986 §4.2 rules out).
    /// When the reference has no fragment, the base's fragment is kept, as RFC 9110 §10.2.2
    /// asks of redirects.
    public func resolved(against baseURL: String) -> String? {
        guard let base = URIReference(baseURL), base.scheme != nil,
            let relative = URIReference(reference)
        else { return nil }
        var target = relative.resolved(against: base)
        if target.fragment == nil { target.fragment = base.fragment }
        return target.text
    }

    /// True when the reference carries its own scheme (`https://…`), as opposed to a relative one.
    public var isAbsolute: Bool { URIReference(reference)?.scheme != nil }

    private static func trimmingWhitespace(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        let isSpace: (UInt8) -> Bool = { $0 == HeaderByte.space || $0 == HeaderByte.tab }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }),
            let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return [] }
        return bytes[first...last]
    }

    /// Encodes bytes that may not appear in a URI (RFC 3986 §2): space, `"<>\^`{|}` and non-ASCII.
    private static func percentEncodingUnsafeBytes(_ bytes: ArraySlice<UInt8>) -> String {
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        for byte in bytes {
            switch byte {
            case 0x20, 0x22, 0x3C, 0x3E, 0x5C, 0x5E, 0x60, 0x7B, 0x7C, 0x7D, 0x80...0xFF:
                output.append(HeaderByte.percent)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            default:
                output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}

/// The five components of a URI reference (RFC 3986 Appendix B), with §5.2 resolution.
struct URIReference: Hashable {
    var scheme: String?
    var authority: String?
    var path: String
    var query: String?
    var fragment: String?

    private init(empty: Void) {
        path = ""
    }

    /// Splits `text` into components; nil if a scheme-like prefix is not a valid scheme.
    init?(_ text: String) {
        let bytes = Array(text.utf8)
        var index = 0
        let string: (Range<Int>) -> String = { String(decoding: bytes[$0], as: UTF8.self) }

        // scheme ":" — only if a colon comes before any of "/?#".
        if let colon = bytes.firstIndex(where: {
            $0 == HeaderByte.colon || $0 == HeaderByte.slash
                || $0 == HeaderByte.questionMark || $0 == HeaderByte.numberSign
        }),
            bytes[colon] == HeaderByte.colon, colon > 0
        {
            let candidate = bytes[0..<colon]
            guard let firstByte = candidate.first, HeaderByte.isAlpha(firstByte),
                candidate.allSatisfy({
                    HeaderByte.isAlpha($0) || HeaderByte.isDigit($0)
                        || $0 == 0x2B || $0 == HeaderByte.hyphen || $0 == HeaderByte.dot
                })
            else { return nil }
            scheme = string(0..<colon)
            index = colon + 1
        }
        // "//" authority
        if index + 1 < bytes.count, bytes[index] == HeaderByte.slash, bytes[index + 1] == HeaderByte.slash {
            let start = index + 2
            let end =
                bytes[start...].firstIndex(where: {
                    $0 == HeaderByte.slash
                        || $0 == HeaderByte.questionMark || $0 == HeaderByte.numberSign
                }) ?? bytes.count
            authority = string(start..<end)
            index = end
        }
        let pathEnd =
            bytes[index...].firstIndex(where: {
                $0 == HeaderByte.questionMark
                    || $0 == HeaderByte.numberSign
            }) ?? bytes.count
        path = string(index..<pathEnd)
        index = pathEnd
        if index < bytes.count, bytes[index] == HeaderByte.questionMark {
            let end = bytes[(index + 1)...].firstIndex(of: HeaderByte.numberSign) ?? bytes.count
            query = string((index + 1)..<end)
            index = end
        }
        if index < bytes.count, bytes[index] == HeaderByte.numberSign {
            fragment = string((index + 1)..<bytes.count)
        }
    }

    /// The reference recomposed (RFC 3986 §5.3).
    var text: String {
        var result = ""
        if let scheme { result += scheme + ":" }
        if let authority { result += "//" + authority }
        result += path
        if let query { result += "?" + query }
        if let fragment { result += "#" + fragment }
        return result
    }

    /// The target URI for this reference against `base` (RFC 3986 §5.2.2, strict parser).
    func resolved(against base: URIReference) -> URIReference {
        var target = URIReference(empty: ())
        if scheme != nil {
            target.scheme = scheme
            target.authority = authority
            target.path = DotSegments.removed(from: path)
            target.query = query
        } else {
            if authority != nil {
                target.authority = authority
                target.path = DotSegments.removed(from: path)
                target.query = query
            } else {
                if path.isEmpty {
                    target.path = base.path
                    target.query = query ?? base.query
                } else {
                    if path.hasPrefix("/") {
                        target.path = DotSegments.removed(from: path)
                    } else {
                        target.path = DotSegments.removed(from: merged(with: base))
                    }
                    target.query = query
                }
                target.authority = base.authority
            }
            target.scheme = base.scheme
        }
        target.fragment = fragment
        return target
    }

    /// RFC 3986 §5.2.3: this relative path appended to the base path's directory.
    private func merged(with base: URIReference) -> String {
        if base.authority != nil && base.path.isEmpty { return "/" + path }
        guard let lastSlash = base.path.lastIndex(of: "/") else { return path }
        return String(base.path[...lastSlash]) + path
    }
}

import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Expands httpie's URL shorthands and checks the result: `:8080/path` is
/// `http://localhost:8080/path`, `:/path` is `http://localhost/path`, `://host/path` is
/// `http://host/path`, and a URL without a scheme gets `http://`.
///
/// Text that has `://` before any `/`, `?` or `#` names its scheme, and the scheme must be
/// http or https: `htp://x` is a typo to report, not a host to look up. The host must be a
/// registered name (RFC 3986 §3.2.2: letters, digits, `-._~` and percent escapes), an IPv4
/// address or a bracketed IPv6 address, and the port a number up to 65535.
enum URLShorthand {
    /// The scheme added to URLs typed without one.
    static let defaultScheme = "http"

    /// Returns the full URL text for `input`.
    static func expand(_ input: String) -> String {
        if schemeRange(in: input) != nil { return input }
        if input.hasPrefix("://") { return defaultScheme + input }
        var rest = input
        if rest.hasPrefix(":") {
            // `:3000/x` → `localhost:3000/x`; `:/x` → `localhost/x`.
            let afterColon = rest.dropFirst()
            if afterColon.hasPrefix("/") || afterColon.isEmpty {
                rest = "localhost" + afterColon
            } else {
                rest = "localhost" + rest
            }
        }
        return "\(defaultScheme)://\(rest)"
    }

    /// Parses the expanded URL, its path without dot segments unless `keepsDotSegments`
    /// (`--path-as-is`; see ``DotSegments``).
    /// - Throws: ``CLIError`` (usage) quoting `input`, any password in it redacted, when its
    ///   scheme is not http or https, its host or port is invalid, or it is not a URL.
    static func url(from input: String, keepsDotSegments: Bool = false) throws -> URL {
        let shown = HeaderRedaction.redactingURLPasswords(in: input)
        if let range = schemeRange(in: input) {
            let scheme = input[..<range.lowerBound]
            guard ["http", "https"].contains(scheme.lowercased()) else {
                throw CLIError.usage("\"\(shown)\": unknown scheme \"\(scheme)\"; use http:// or https://")
            }
        }
        let text = expand(input)
        if let problem = authorityProblem(in: text) { throw CLIError.usage("\"\(shown)\": \(problem)") }
        guard var components = URLComponents(string: text), let host = components.host, !host.isEmpty else {
            throw CLIError.usage("\"\(shown)\" is not a valid http or https URL")
        }
        if !keepsDotSegments {
            components.percentEncodedPath = DotSegments.removed(from: components.percentEncodedPath)
        }
        guard let url = components.url else {
            throw CLIError.usage("\"\(shown)\" is not a valid http or https URL")
        }
        return url
    }

    /// The range of `://` when the text before it is all a scheme could be (no `/`, `?`, `#`).
    private static func schemeRange(in text: String) -> Range<String.Index>? {
        guard let range = text.range(of: "://") else { return nil }
        let prefix = text[..<range.lowerBound]
        guard !prefix.isEmpty, !prefix.contains(where: { "/?#".contains($0) }) else { return nil }
        return range
    }

    /// What is wrong with the host or port of `text` (a URL with a scheme), or nil.
    static func authorityProblem(in text: String) -> String? {
        guard let range = text.range(of: "://") else { return "no scheme" }
        let rest = text[range.upperBound...]
        let authority = rest[..<(rest.firstIndex { "/?#".contains($0) } ?? rest.endIndex)]
        var hostPort = authority
        if let at = authority.lastIndex(of: "@") { hostPort = authority[authority.index(after: at)...] }
        let host: Substring
        let port: Substring?
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { return "the IPv6 address has no closing \"]\"" }
            host = hostPort[hostPort.index(after: hostPort.startIndex)..<close]
            let after = hostPort[hostPort.index(after: close)...]
            if after.isEmpty {
                port = nil
            } else if after.hasPrefix(":") {
                port = after.dropFirst()
            } else {
                return "unexpected \"\(after)\" after the IPv6 address"
            }
            guard isIPv6(String(host)) else { return "\"[\(host)]\" is not a valid IPv6 address" }
        } else {
            if let colon = hostPort.lastIndex(of: ":") {
                host = hostPort[..<colon]
                port = hostPort[hostPort.index(after: colon)...]
            } else {
                host = hostPort
                port = nil
            }
            guard !host.isEmpty else { return "the host is missing" }
            guard isRegisteredName(host) else { return "\"\(host)\" is not a valid host name" }
        }
        if let port, !port.isEmpty {
            guard port.allSatisfy({ $0.isASCII && $0.isNumber }), port.count <= 5, let number = Int(port),
                number <= 65535
            else { return "the port \"\(port)\" is not a number from 0 to 65535" }
        }
        return nil
    }

    /// Letters (any script, for internationalized names), digits, `-._~` and `%HH` escapes.
    private static func isRegisteredName(_ host: Substring) -> Bool {
        var scalars = host.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            if scalar == "%" {
                guard let high = scalars.next(), let low = scalars.next(), high.properties.isASCIIHexDigit,
                    low.properties.isASCIIHexDigit
                else { return false }
                continue
            }
            if scalar.isASCII {
                guard
                    ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                        || "-._~".unicodeScalars.contains(scalar)
                else { return false }
            } else if !(scalar.properties.isAlphabetic || scalar.properties.numericType != nil
                || scalar.properties.isJoinControl
                || scalar.properties.generalCategory == .nonspacingMark)
            {
                return false
            }
        }
        return true
    }

    private static func isIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1
    }
}

import Foundation

/// Expands httpie's URL shorthands: `:8080/path` is `http://localhost:8080/path`, `:/path` is
/// `http://localhost/path`, and a URL without a scheme gets `http://`.
enum URLShorthand {
    /// The scheme added to URLs typed without one.
    static let defaultScheme = "http"

    /// Returns the full URL text for `input`.
    static func expand(_ input: String) -> String {
        if hasScheme(input) { return input }
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

    /// Parses the expanded URL.
    /// - Throws: ``CLIError`` (usage) quoting `input` when it is not an http(s) URL with a host.
    static func url(from input: String) throws -> URL {
        let text = expand(input)
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty,
            let url = components.url
        else {
            throw CLIError.usage("\"\(input)\" is not a valid http or https URL")
        }
        return url
    }

    /// True when `text` starts with `scheme://` (RFC 3986 scheme characters).
    private static func hasScheme(_ text: String) -> Bool {
        guard let range = text.range(of: "://") else { return false }
        let scheme = text[..<range.lowerBound]
        guard let first = scheme.unicodeScalars.first, first.properties.isASCIIHexDigit || first.isASCII,
            CharacterSet.letters.contains(first)
        else { return false }
        return scheme.unicodeScalars.allSatisfy {
            $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "+-.".unicodeScalars.contains($0))
        }
    }
}

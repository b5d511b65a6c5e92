import Foundation
import HTTPTypes

/// Hides credential values in header fields and URLs before they reach a log.
///
/// By default `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` are redacted.
/// What stays is what helps debugging without being a secret: the authorization scheme
/// (`Bearer <redacted>`), cookie names, and `Set-Cookie` attributes such as `Path`.
public struct HeaderRedaction: Sendable {
    /// The text that replaces a secret.
    public static let placeholder = "<redacted>"

    /// The lower-case header names whose values are secrets.
    public var sensitiveFieldNames: Set<String>

    /// Makes a redaction that hides the four credential headers plus any `additionalFieldNames`
    /// (such as `X-API-Key`), matched case-insensitively.
    public init(additionalFieldNames: [String] = []) {
        sensitiveFieldNames = ["authorization", "proxy-authorization", "cookie", "set-cookie"]
        sensitiveFieldNames.formUnion(additionalFieldNames.map { $0.lowercased() })
    }

    /// Whether the value of `name` is redacted.
    public func isSensitive(_ name: String) -> Bool {
        sensitiveFieldNames.contains(name.lowercased())
    }

    /// The value of `name` as it may be logged.
    public func redactedValue(_ value: String, forField name: String) -> String {
        switch name.lowercased() {
        case _ where !isSensitive(name):
            value
        case "authorization", "proxy-authorization":
            Self.redactCredentials(value)
        case "cookie":
            Self.redactCookiePairs(value, keepingAttributes: false)
        case "set-cookie":
            Self.redactCookiePairs(value, keepingAttributes: true)
        default:
            Self.placeholder
        }
    }

    /// Every field as `(name, loggable value)`, in order; repeated fields stay repeated.
    public func redacted(_ fields: HTTPFields) -> [(name: String, value: String)] {
        fields.map { field in
            (field.name.rawName, redactedValue(field.value, forField: field.name.rawName))
        }
    }

    /// `url` with any password in its user-info replaced, for log lines.
    public func redacted(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            components.password != nil
        else { return url.absoluteString }
        components.percentEncodedPassword = Self.placeholder.addingPercentEncoding(
            withAllowedCharacters: .alphanumerics)
        return components.string ?? url.absoluteString
    }

    /// `Basic abc` → `Basic <redacted>`; a value with no scheme becomes the placeholder.
    private static func redactCredentials(_ value: String) -> String {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard let space = trimmed.firstIndex(of: " ") else { return placeholder }
        return "\(trimmed[..<space]) \(placeholder)"
    }

    /// `a=1; b=2` → `a=<redacted>; b=<redacted>`; for Set-Cookie only the first pair is the
    /// cookie, the rest are attributes (RFC 6265 §4.1.1) and stay.
    private static func redactCookiePairs(_ value: String, keepingAttributes: Bool) -> String {
        value.split(separator: ";", omittingEmptySubsequences: false).enumerated().map { index, part in
            if keepingAttributes && index > 0 { return String(part) }
            let piece = part.trimmingCharacters(in: .whitespaces)
            guard let equals = piece.firstIndex(of: "=") else { return (index > 0 ? " " : "") + placeholder }
            return (index > 0 ? " " : "") + "\(piece[..<equals])=\(placeholder)"
        }.joined(separator: ";")
    }
}

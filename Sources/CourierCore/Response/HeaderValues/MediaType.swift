// Standard library only: Fuzz/ compiles this folder alone with swiftc.

/// A parsed `Content-Type` (or `Accept` element) value: `type/subtype; name=value…` (RFC 9110 §8.3.1).
///
/// Type, subtype and parameter names are case-insensitive and stored lower-cased; parameter
/// values keep their case, with quoted-strings unquoted. When a parameter name repeats, the
/// first occurrence wins for lookups, as the WHATWG MIME sniffing standard does.
///
/// ```swift
/// MediaType("Text/HTML; Charset=\"UTF-8\"")?.charset   // "utf-8"
/// ```
public struct MediaType: Sendable, Hashable, CustomStringConvertible {
    /// One `name=value` parameter, name lower-cased, value unquoted.
    public typealias Parameter = HeaderParameter

    /// The top-level type, lower-cased (`text`).
    public var type: String
    /// The subtype, lower-cased (`html`, `vnd.api+json`).
    public var subtype: String
    /// The parameters in the order the server sent them.
    public var parameters: [Parameter]

    /// Parses a media type; nil when `headerValue` is not `token "/" token *( OWS ";" OWS parameter )`.
    ///
    /// Leading and trailing whitespace is ignored. Cost: one pass over the value.
    public init?(_ headerValue: String) {
        var scanner = HeaderValueScanner(headerValue)
        scanner.skipWhitespace()
        guard let type = scanner.consumeToken(), scanner.consume(HeaderByte.slash),
            let subtype = scanner.consumeToken(),
            let raw = scanner.consumeParameters()
        else { return nil }
        self.type = HeaderByte.lowercased(type)
        self.subtype = HeaderByte.lowercased(subtype)
        self.parameters = raw.map { Parameter(name: $0.name, value: $0.value) }
    }

    /// `type/subtype` without parameters, lower-cased (`application/json`).
    public var essence: String { type + "/" + subtype }

    /// The value of the first parameter named `name` (case-insensitive), or nil.
    public func parameter(_ name: String) -> String? {
        parameters.value(named: name)
    }

    /// The `charset` parameter lower-cased (`utf-8`), or nil when absent or empty.
    public var charset: String? {
        guard let value = parameter("charset"), !value.isEmpty else { return nil }
        return HeaderByte.lowercased(value)
    }

    /// True for `*/*`, or when type and subtype equal `other`'s or `other` has `*` in their place.
    public func matches(_ other: MediaType) -> Bool {
        (other.type == "*" || other.type == type) && (other.subtype == "*" || other.subtype == subtype)
    }

    /// The normalised form: lower-cased names, values quoted only when they are not tokens.
    public var description: String {
        var text = essence
        for parameter in parameters {
            text += ";" + parameter.name + "="
            if !parameter.value.isEmpty, parameter.value.utf8.allSatisfy(HeaderByte.isTokenCharacter) {
                text += parameter.value
            } else {
                text += "\""
                for scalar in parameter.value.unicodeScalars {
                    if scalar == "\"" || scalar == "\\" { text += "\\" }
                    text.unicodeScalars.append(scalar)
                }
                text += "\""
            }
        }
        return text
    }
}

import HTTPTypes

/// The directives of the `Cache-Control` field lines of a request or a response (RFC 9111 §5.2).
///
/// Directive names are case-insensitive; an argument is a token or a quoted string (§5.2:
/// recipients accept both). Unknown directives are ignored (§5.2.3). A `max-age`, `s-maxage`,
/// `min-fresh` or `max-stale` whose argument is not delta-seconds counts as 0, so an invalid
/// freshness is treated as stale, as §4.2.1 advises; when a directive appears twice, the first
/// occurrence counts (§4.2.1).
struct CacheControl: Sendable, Hashable {
    /// `max-age=N`: the response is fresh for N seconds; in a request, the client accepts no older response.
    var maxAge: Int?
    /// `s-maxage=N`: for shared caches only. A private cache does not use it for freshness
    /// (§5.2.2.10); it still counts as explicit permission to store an authorized response (§3.5).
    var sharedMaxAge: Int?
    /// `max-stale` (request): stale responses are acceptable, by at most ``maxStale`` seconds
    /// when it has an argument.
    var allowsStale = false
    var maxStale: Int?
    /// `min-fresh=N` (request): the response must stay fresh for at least N more seconds.
    var minFresh: Int?
    /// `no-cache`: never reuse without revalidating (its qualified form is handled as the
    /// unqualified one, which §5.2.2.4 allows).
    var noCache = false
    /// `no-store`: never store.
    var noStore = false
    /// `must-revalidate`: once stale, never reuse without revalidating (§5.2.2.2).
    var mustRevalidate = false
    /// `public`: any cache may store it, even for a request with `Authorization`.
    var isPublic = false
    /// `private`: only a private cache may store it; this cache is one.
    var isPrivate = false
    /// `only-if-cached` (request): answer from the cache or with 504, never from the network.
    var onlyIfCached = false
    /// `must-understand`: store only when the status code is understood (§5.2.2.3).
    var mustUnderstand = false

    /// The directives of every `Cache-Control` line of `fields`.
    init(_ fields: HTTPFields) {
        for field in fields where field.name == .cacheControl {
            parse(field.value)
        }
    }

    init() {}

    /// The largest delta-seconds value a cache has to represent (RFC 9111 §1.2.2).
    static let deltaSecondsCeiling = 2_147_483_648

    /// Reads delta-seconds: digits only, capped at 2^31 (§1.2.2); anything else is nil.
    static func deltaSeconds<S: StringProtocol>(_ text: S) -> Int? {
        var value = 0
        var sawDigit = false
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            sawDigit = true
            value = min(value * 10 + Int(byte - UInt8(ascii: "0")), deltaSecondsCeiling)
        }
        return sawDigit ? value : nil
    }

    private mutating func parse(_ value: String) {
        for (name, argument) in Self.directives(value) {
            // An argument that is not delta-seconds makes the directive 0 (stale), not absent.
            let seconds = argument.map { Self.deltaSeconds($0) ?? 0 }
            switch name {
            case "max-age": if maxAge == nil { maxAge = seconds ?? 0 }
            case "s-maxage": if sharedMaxAge == nil { sharedMaxAge = seconds ?? 0 }
            case "min-fresh": if minFresh == nil { minFresh = seconds ?? 0 }
            case "max-stale":
                if !allowsStale {
                    allowsStale = true
                    maxStale = seconds
                }
            case "no-cache": noCache = true
            case "no-store": noStore = true
            case "must-revalidate": mustRevalidate = true
            case "public": isPublic = true
            case "private": isPrivate = true
            case "only-if-cached": onlyIfCached = true
            case "must-understand": mustUnderstand = true
            default: break
            }
        }
    }

    /// Splits a field value into lower-cased directive names and unquoted arguments. Commas
    /// inside a quoted string (`no-cache="a, b"`) do not split.
    static func directives(_ value: String) -> [(name: String, argument: String?)] {
        var result: [(name: String, argument: String?)] = []
        var bytes = Array(value.utf8)[...]
        while !bytes.isEmpty {
            bytes = bytes.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: ",") }
            guard !bytes.isEmpty else { break }
            let nameEnd = bytes.firstIndex { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: ",") } ?? bytes.endIndex
            let name = trimmed(String(decoding: bytes[..<nameEnd], as: UTF8.self)).lowercased()
            bytes = bytes[nameEnd...]
            var argument: String?
            if bytes.first == UInt8(ascii: "=") {
                bytes = bytes.dropFirst()
                bytes = bytes.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
                if bytes.first == UInt8(ascii: "\"") {
                    var text: [UInt8] = []
                    var index = bytes.index(after: bytes.startIndex)
                    while index < bytes.endIndex, bytes[index] != UInt8(ascii: "\"") {
                        if bytes[index] == UInt8(ascii: "\\"), bytes.index(after: index) < bytes.endIndex {
                            index = bytes.index(after: index)
                        }
                        text.append(bytes[index])
                        index = bytes.index(after: index)
                    }
                    argument = String(decoding: text, as: UTF8.self)
                    bytes = index < bytes.endIndex ? bytes[bytes.index(after: index)...] : bytes[bytes.endIndex...]
                    bytes = bytes.drop { $0 != UInt8(ascii: ",") }
                } else {
                    let end = bytes.firstIndex(of: UInt8(ascii: ",")) ?? bytes.endIndex
                    argument = trimmed(String(decoding: bytes[..<end], as: UTF8.self))
                    bytes = bytes[end...]
                }
            }
            if !name.isEmpty { result.append((name, argument)) }
        }
        return result
    }

    /// `text` without leading and trailing spaces and tabs (the blanks of RFC 9110's OWS).
    static func trimmed(_ text: String) -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !blank($0) }), let last = text.lastIndex(where: { !blank($0) })
        else { return "" }
        return String(text[first...last])
    }
}

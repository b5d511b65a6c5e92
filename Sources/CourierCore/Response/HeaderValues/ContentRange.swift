// Standard library only: Fuzz/ compiles this folder alone with swiftc.

/// A parsed `Content-Range` response header for byte ranges (RFC 9110 §14.4).
///
/// ```swift
/// ContentRange("bytes 0-499/1234")   // .satisfied(first: 0, last: 499, completeLength: 1234)
/// ContentRange("bytes 500-999/*")    // .satisfied(first: 500, last: 999, completeLength: nil)
/// ContentRange("bytes */1234")       // .unsatisfied(completeLength: 1234), sent with 416
/// ```
///
/// Only the `bytes` unit is understood (case-insensitive); any other unit gives nil. A parsed
/// satisfied range always has `first <= last`, and `last < completeLength` when the length is known.
public enum ContentRange: Sendable, Hashable {
    /// The body holds bytes `first...last` of a representation of `completeLength` bytes (nil: unknown).
    case satisfied(first: Int64, last: Int64, completeLength: Int64?)
    /// No range was satisfiable; the representation has `completeLength` bytes (a 416 response).
    case unsatisfied(completeLength: Int64)

    /// Parses a header value; nil for other units, bad syntax, numbers past Int64, or an
    /// invalid range (first > last, or last ≥ the complete length). Surrounding whitespace is ignored.
    public init?(_ headerValue: String) {
        var scanner = HeaderValueScanner(headerValue)
        scanner.skipWhitespace()
        guard let unit = scanner.consumeToken(), HeaderByte.lowercased(unit) == "bytes",
            scanner.consume(HeaderByte.space)
        else { return nil }
        if scanner.consume(HeaderByte.asterisk) {
            guard scanner.consume(HeaderByte.slash), let length = scanner.consumeDigits() else { return nil }
            scanner.skipWhitespace()
            guard scanner.isAtEnd else { return nil }
            self = .unsatisfied(completeLength: length)
            return
        }
        guard let first = scanner.consumeDigits(), scanner.consume(HeaderByte.hyphen),
            let last = scanner.consumeDigits(), scanner.consume(HeaderByte.slash)
        else { return nil }
        var completeLength: Int64?
        if !scanner.consume(HeaderByte.asterisk) {
            guard let length = scanner.consumeDigits() else { return nil }
            completeLength = length
        }
        scanner.skipWhitespace()
        // last < Int64.max keeps byteCount from overflowing when the length is unknown.
        guard scanner.isAtEnd, first <= last, last < Int64.max else { return nil }
        if let completeLength, last >= completeLength { return nil }
        self = .satisfied(first: first, last: last, completeLength: completeLength)
    }

    /// The range's bounds, or nil for an unsatisfied range.
    public var range: ClosedRange<Int64>? {
        if case .satisfied(let first, let last, _) = self { return first...last }
        return nil
    }

    /// The number of body bytes the range covers (`last - first + 1`); 0 when unsatisfied.
    public var byteCount: Int64 {
        if case .satisfied(let first, let last, _) = self { return last - first + 1 }
        return 0
    }

    /// The complete representation length, when the server stated it.
    public var completeLength: Int64? {
        switch self {
        case .satisfied(_, _, let completeLength): return completeLength
        case .unsatisfied(let completeLength): return completeLength
        }
    }
}

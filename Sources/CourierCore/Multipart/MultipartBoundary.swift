/// The boundary that separates the parts of a multipart body (RFC 2046 §5.1.1).
///
/// Either random, from the system's cryptographically secure generator, so that no part's
/// content can contain it by accident or by design, or given by a caller and validated.
public struct MultipartBoundary: Hashable, Sendable, CustomStringConvertible {
    /// The boundary text, without the leading `--`.
    public let rawValue: String

    /// Validates `rawValue` against RFC 2046 §5.1.1: 1 to 70 characters from `bchars`
    /// (letters, digits, `'()+_,-./:=?` and space), not ending in a space. Nil otherwise.
    public init?(_ rawValue: String) {
        guard MultipartBoundary.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// Validates `rawValue` as ``init(_:)`` does.
    /// - Throws: ``CourierError`` `.invalidBoundary` quoting the rejected boundary.
    public init(validating rawValue: String) throws {
        guard let boundary = MultipartBoundary(rawValue) else {
            throw CourierError(
                .invalidBoundary,
                "\"\(HeaderField.escaped(rawValue))\" is not a valid multipart boundary: RFC 2046 allows 1 to 70 "
                    + "letters, digits or '()+_,-./:=? and spaces, not ending in a space",
                offendingInput: rawValue)
        }
        self = boundary
    }

    /// Trusts `rawValue`; for boundaries Courier generates itself.
    init(unchecked rawValue: String) { self.rawValue = rawValue }

    /// A new boundary, `courier.boundary.` followed by 16 hex digits from the system CSPRNG.
    public static func random() -> MultipartBoundary {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let hex = String(value, radix: 16)
        return MultipartBoundary(
            unchecked: "courier.boundary." + String(repeating: "0", count: 16 - hex.utf8.count) + hex)
    }

    /// The boundary text, as ``rawValue``.
    public var description: String { rawValue }

    /// Whether the boundary must be quoted as a `Content-Type` parameter: it holds a character
    /// that is not an RFC 9110 token character (such as `:`, `/`, `=` or a space).
    var needsQuoting: Bool { !rawValue.utf8.allSatisfy(HeaderByte.isTokenCharacter) }

    static func isValid(_ text: String) -> Bool {
        let bytes = text.utf8
        guard (1...70).contains(bytes.count), bytes.last != UInt8(ascii: " ") else { return false }
        return bytes.allSatisfy(isBoundaryCharacter)
    }

    /// RFC 2046 `bchars`: ALPHA, DIGIT, `'()+_,-./:=?` and space.
    static func isBoundaryCharacter(_ byte: UInt8) -> Bool {
        if HeaderByte.isAlpha(byte) || HeaderByte.isDigit(byte) { return true }
        switch byte {
        case 0x20, 0x27, 0x28, 0x29, 0x2B, 0x2C, 0x2D, 0x2E, 0x2F, 0x3A, 0x3D, 0x3F, 0x5F: return true
        default: return false
        }
    }
}

// Standard library only: Fuzz/ compiles this folder alone with swiftc.

/// A cursor over the UTF-8 bytes of one header field value, with the RFC 9110 §5.6 building
/// blocks (token, quoted-string, OWS, parameters) that the header-value parsers share.
///
/// Every method either consumes what it recognises and returns it, or returns nil and leaves
/// the cursor where it was, so callers can try alternatives. Nothing here traps on any input.
struct HeaderValueScanner {
    private let bytes: [UInt8]
    private(set) var position: Int = 0

    init(_ value: String) {
        bytes = Array(value.utf8)
    }

    /// True once every byte has been consumed.
    var isAtEnd: Bool { position >= bytes.count }

    /// The next byte, without consuming it.
    var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

    /// Skips optional whitespace (SP / HTAB).
    mutating func skipWhitespace() {
        while let byte = peek, byte == HeaderByte.space || byte == HeaderByte.tab { position += 1 }
    }

    /// Consumes `byte` if it is next.
    mutating func consume(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        position += 1
        return true
    }

    /// Consumes a run of bytes matching `predicate`; nil if the run is empty.
    mutating func consumeRun(where predicate: (UInt8) -> Bool) -> String? {
        let start = position
        while let byte = peek, predicate(byte) { position += 1 }
        guard position > start else { return nil }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// Consumes an RFC 9110 token (1*tchar).
    mutating func consumeToken() -> String? {
        consumeRun(where: HeaderByte.isTokenCharacter)
    }

    /// Consumes 1*DIGIT as a non-negative Int64; nil on no digits or overflow (cursor unchanged).
    mutating func consumeDigits() -> Int64? {
        let start = position
        var value: Int64 = 0
        while let byte = peek, HeaderByte.isDigit(byte) {
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = shifted.addingReportingOverflow(Int64(byte - HeaderByte.zero))
            guard !overflowA, !overflowB else {
                position = start
                return nil
            }
            value = sum
            position += 1
        }
        guard position > start else { return nil }
        return value
    }

    /// Consumes an RFC 9110 quoted-string and returns its content with quoted-pairs unescaped.
    ///
    /// obs-text (0x80–0xFF) is accepted inside quotes, as the grammar allows; the content is
    /// decoded as UTF-8 with invalid sequences replaced, because servers send raw UTF-8 there.
    mutating func consumeQuotedString() -> String? {
        let start = position
        guard consume(HeaderByte.quote) else { return nil }
        var content: [UInt8] = []
        while let byte = peek {
            position += 1
            switch byte {
            case HeaderByte.quote:
                return String(decoding: content, as: UTF8.self)
            case HeaderByte.backslash:
                guard let escaped = peek, HeaderByte.isQuotedPairCharacter(escaped) else {
                    position = start
                    return nil
                }
                content.append(escaped)
                position += 1
            default:
                guard HeaderByte.isQuotedTextCharacter(byte) else {
                    position = start
                    return nil
                }
                content.append(byte)
            }
        }
        position = start  // no closing quote
        return nil
    }

    /// One `name=value` pair of a parameter list, with the name lower-cased.
    struct RawParameter {
        var name: String
        var value: String
        /// True when the value was a quoted-string (RFC 8187 ext-values never are).
        var wasQuoted: Bool
    }

    /// Consumes `*( OWS ";" OWS [ name "=" ( token / quoted-string ) ] )` up to the end.
    ///
    /// Returns nil unless the parameters run to the end of the value. Whitespace around `=` is
    /// not allowed by RFC 9110 and is refused.
    mutating func consumeParameters() -> [RawParameter]? {
        var parameters: [RawParameter] = []
        while true {
            skipWhitespace()
            if isAtEnd { return parameters }
            guard consume(HeaderByte.semicolon) else { return nil }
            skipWhitespace()
            // An empty parameter (`;;` or a trailing `;`) is allowed by the grammar.
            if isAtEnd || peek == HeaderByte.semicolon { continue }
            guard let name = consumeToken(), consume(HeaderByte.equals) else { return nil }
            if let quoted = consumeQuotedString() {
                parameters.append(RawParameter(name: HeaderByte.lowercased(name), value: quoted, wasQuoted: true))
            } else if let token = consumeToken() {
                parameters.append(RawParameter(name: HeaderByte.lowercased(name), value: token, wasQuoted: false))
            } else {
                return nil
            }
        }
    }
}

/// Byte classes from RFC 9110 §5.6 and RFC 3986 §2, on UTF-8 code units.
enum HeaderByte {
    static let tab: UInt8 = 0x09
    static let space: UInt8 = 0x20
    static let quote: UInt8 = 0x22
    static let percent: UInt8 = 0x25
    static let apostrophe: UInt8 = 0x27
    static let asterisk: UInt8 = 0x2A
    static let hyphen: UInt8 = 0x2D
    static let dot: UInt8 = 0x2E
    static let slash: UInt8 = 0x2F
    static let zero: UInt8 = 0x30
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let equals: UInt8 = 0x3D
    static let questionMark: UInt8 = 0x3F
    static let backslash: UInt8 = 0x5C
    static let numberSign: UInt8 = 0x23

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    static func isAlpha(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }

    /// tchar: `!#$%&'*+-.^_`|~`, DIGIT, ALPHA.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        if isAlpha(byte) || isDigit(byte) { return true }
        switch byte {
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E:
            return true
        default:
            return false
        }
    }

    /// attr-char (RFC 8187 §3.2.1, RFC 5987): ALPHA, DIGIT, `!#$&+-.^_`|~`; the bytes an
    /// extended parameter value carries unescaped, both when reading and when writing one.
    static func isAttributeCharacter(_ byte: UInt8) -> Bool {
        if isAlpha(byte) || isDigit(byte) { return true }
        switch byte {
        case 0x21, 0x23, 0x24, 0x26, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: return true
        default: return false
        }
    }

    /// qdtext: HTAB, SP, 0x21, 0x23–0x5B, 0x5D–0x7E, obs-text.
    static func isQuotedTextCharacter(_ byte: UInt8) -> Bool {
        byte == tab || byte == space || byte == 0x21 || (byte >= 0x23 && byte <= 0x5B)
            || (byte >= 0x5D && byte <= 0x7E) || byte >= 0x80
    }

    /// The character after a backslash in a quoted-pair: HTAB, SP, VCHAR, obs-text.
    static func isQuotedPairCharacter(_ byte: UInt8) -> Bool {
        byte == tab || byte == space || (byte >= 0x21 && byte <= 0x7E) || byte >= 0x80
    }

    /// Lower-cases HeaderByte letters only, so the result never depends on the locale or on Unicode tables.
    static func lowercased(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return text }
        return String(decoding: text.utf8.map { ($0 >= 0x41 && $0 <= 0x5A) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}

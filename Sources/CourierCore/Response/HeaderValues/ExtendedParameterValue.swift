// Standard library only: Fuzz/ compiles this folder alone with swiftc.

/// Decoding of RFC 8187 extended parameter values: `charset "'" [ language ] "'" value-chars`,
/// as used by `filename*=UTF-8''na%C3%AFve.txt`.
enum ExtendedParameterValue {
    /// Decodes an ext-value; nil on bad syntax, an unsupported charset, or bytes that are not
    /// valid in the declared charset. UTF-8 and ISO-8859-1 are supported (RFC 8187 §3.2.1
    /// requires UTF-8 and allows others).
    static func decode(_ extValue: String) -> String? {
        let bytes = Array(extValue.utf8)
        guard let firstQuote = bytes.firstIndex(of: HeaderByte.apostrophe),
            let secondQuote = bytes[(firstQuote + 1)...].firstIndex(of: HeaderByte.apostrophe)
        else { return nil }
        let charset = HeaderByte.lowercased(String(decoding: bytes[..<firstQuote], as: UTF8.self))
        let language = bytes[(firstQuote + 1)..<secondQuote]
        guard language.allSatisfy({ HeaderByte.isAlpha($0) || HeaderByte.isDigit($0) || $0 == HeaderByte.hyphen })
        else { return nil }
        guard let decoded = percentDecode(bytes[(secondQuote + 1)...]) else { return nil }
        switch charset {
        case "utf-8":
            return validUTF8(decoded)
        case "iso-8859-1":
            // Every byte is the Unicode scalar with the same number.
            var text = ""
            text.unicodeScalars.append(contentsOf: decoded.map { Unicode.Scalar($0) })
            return text
        default:
            return nil
        }
    }

    /// Percent-decodes value-chars (`pct-encoded / attr-char`); nil on any other byte.
    private static func percentDecode(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == HeaderByte.percent {
                guard index + 2 < bytes.endIndex,
                    let high = HeaderByte.hexValue(bytes[index + 1]),
                    let low = HeaderByte.hexValue(bytes[index + 2])
                else { return nil }
                output.append(high << 4 | low)
                index += 3
            } else if HeaderByte.isAttributeCharacter(byte) {
                output.append(byte)
                index += 1
            } else {
                return nil
            }
        }
        return output
    }

    /// The string for `bytes` if they are well-formed UTF-8; nil rather than replacement characters.
    private static func validUTF8(_ bytes: [UInt8]) -> String? {
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        var text = ""
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): text.unicodeScalars.append(scalar)
            case .emptyInput: return text
            case .error: return nil
            }
        }
    }
}

/// The `Set-Cookie` parsing algorithm of RFC 6265 §5.2, which is deliberately lenient: it
/// never fails on an attribute, it skips it. Only the name-value pair can make the whole
/// field unusable.
///
/// It yields the raw name, value and attribute list; ``Cookie/init(setCookie:receivedFrom:at:)``
/// applies the storage model (§5.3) that needs the request URL and the clock.
struct SetCookieParser {
    /// One `;`-separated attribute, as sent: name without surrounding whitespace (case kept),
    /// value without surrounding whitespace (empty when the attribute had no `=`).
    struct Attribute: Equatable {
        var name: String
        var value: String
    }

    var name: String
    var value: String
    var attributes: [Attribute]

    /// Splits a field value; nil when the name-value pair has no `=` or an empty name, as §5.2
    /// steps 2 and 5 ask.
    ///
    /// Works on UTF-8 bytes, not `Character`s: a combining mark after `;` or `=` would otherwise
    /// merge with it into one grapheme and hide the separator.
    init?(_ fieldValue: String) {
        let bytes = Array(fieldValue.utf8)
        let semicolon = UInt8(ascii: ";")
        let equals = UInt8(ascii: "=")
        let pairEnd = bytes.firstIndex(of: semicolon) ?? bytes.endIndex
        let pair = bytes[..<pairEnd]
        guard let pairEquals = pair.firstIndex(of: equals) else { return nil }
        name = Self.trimmedString(pair[..<pairEquals])
        value = Self.trimmedString(pair[(pairEquals + 1)...])
        guard !name.isEmpty else { return nil }

        attributes = []
        var start = pairEnd
        while start < bytes.endIndex {
            let avStart = start + 1  // past the ";"
            let avEnd = bytes[avStart...].firstIndex(of: semicolon) ?? bytes.endIndex
            let cookieAV = bytes[avStart..<avEnd]
            if let avEquals = cookieAV.firstIndex(of: equals) {
                attributes.append(
                    Attribute(
                        name: Self.trimmedString(cookieAV[..<avEquals]),
                        value: Self.trimmedString(cookieAV[(avEquals + 1)...])))
            } else {
                attributes.append(Attribute(name: Self.trimmedString(cookieAV), value: ""))
            }
            start = avEnd
        }
    }

    /// RFC 6265 WSP: space and horizontal tab only.
    private static func trimmedString(_ bytes: ArraySlice<UInt8>) -> String {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }),
            let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}

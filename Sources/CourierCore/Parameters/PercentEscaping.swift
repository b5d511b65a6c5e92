import Foundation

/// Percent-escaping of query components, AFNetworking's `AFPercentEscapedStringFromString`.
///
/// Only `A-Z a-z 0-9 - . _ ~ / ?` stay literal (RFC 3986 §3.4 allows `/` and `?` in a query,
/// and AFNetworking removes `:#[]@!$&'()*+,;=` from the allowed set); every other byte of
/// the UTF-8 form becomes `%XX` with upper-case hex. Escaping works on whole UTF-8 scalars,
/// so a grapheme cluster is never split, whatever its length.
enum PercentEscaping {
    /// Whether `byte` stays literal. The 128-bit table is two constants: bits 0x00–0x3F hold
    /// `-` `.` `/` (0x2D–0x2F), `0`–`9` (0x30–0x39) and `?` (0x3F); bits 0x40–0x7F hold `A`–`Z`
    /// (0x41–0x5A), `_` (0x5F), `a`–`z` (0x61–0x7A) and `~` (0x7E). The hot loop pays a shift and a
    /// test per byte, with no array load and no lazy global.
    @inline(__always)
    static func isLiteral(_ byte: UInt8) -> Bool {
        let below64: UInt64 = (0b111 << 0x2D) | (0x3FF << 0x30) | (1 << 0x3F)
        let from64: UInt64 = (0x3FF_FFFF << 1) | (1 << 0x1F) | (0x3FF_FFFF << 0x21) | (1 << 0x3E)
        let word = byte < 64 ? below64 : (byte < 128 ? from64 : 0)
        return (word &>> UInt64(byte & 63)) & 1 != 0
    }

    /// The upper-case hex digit for a value 0...15.
    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? nibble &+ UInt8(ascii: "0") : nibble &+ (UInt8(ascii: "A") &- 10)
    }
}

extension QueryString {
    /// Percent-escapes `string` for a query key or value.
    ///
    /// `percentEscaped(":#[]@!$&'()*+,;=?/")` is `"%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D?/"`.
    /// A Swift `String` always holds valid Unicode, so this cannot fail; text that may hold a
    /// lone UTF-16 surrogate (from an `NSString` or a file) goes through ``percentEscaped(utf16:)``.
    public static func percentEscaped(_ string: String) -> String {
        var writer = ByteWriter(capacity: string.utf8.count * 3)
        writer.appendEscaped(string)
        return writer.makeString()
    }

    /// Percent-escapes UTF-16 text, such as an `NSString`'s characters, for a query key or value.
    ///
    /// AFNetworking crashes on a lone surrogate (Foundation returns nil for it); Courier
    /// refuses it instead, since no UTF-8 form exists.
    /// - Throws: ``CourierError`` `.unpairedSurrogate` naming the code unit and its offset.
    public static func percentEscaped<Units: Sequence>(utf16 units: Units) throws -> String
    where Units.Element == UInt16 {
        var scalars = String.UnicodeScalarView()
        var offset = 0
        var iterator = units.makeIterator()
        var pending: UInt16? = nil
        while let unit = pending ?? iterator.next() {
            pending = nil
            if UTF16.isLeadSurrogate(unit) {
                if let next = iterator.next() {
                    if UTF16.isTrailSurrogate(next) {
                        let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(next) - 0xDC00)
                        // Always valid: the arithmetic stays within U+10000...U+10FFFF.
                        if let scalar = Unicode.Scalar(value) { scalars.append(scalar) }
                        offset += 2
                        continue
                    }
                    pending = next
                }
                throw unpairedSurrogate(unit, at: offset)
            }
            guard let scalar = Unicode.Scalar(unit) else { throw unpairedSurrogate(unit, at: offset) }
            scalars.append(scalar)
            offset += 1
        }
        return percentEscaped(String(scalars))
    }

    /// Percent-escapes an `NSString`, which unlike a Swift `String` may hold a lone surrogate.
    /// - Throws: ``CourierError`` `.unpairedSurrogate` naming the code unit and its offset.
    public static func percentEscaped(nsString: NSString) throws -> String {
        try percentEscaped(utf16: (0..<nsString.length).lazy.map { nsString.character(at: $0) })
    }

    private static func unpairedSurrogate(_ unit: UInt16, at offset: Int) -> CourierError {
        let hex = String(unit, radix: 16, uppercase: true)
        return CourierError(
            .unpairedSurrogate,
            "the text has a lone UTF-16 surrogate 0x\(hex) at offset \(offset), which has no UTF-8 form",
            offendingInput: "0x\(hex)@\(offset)")
    }
}

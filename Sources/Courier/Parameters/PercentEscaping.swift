import Foundation

/// Percent-escaping of query components, AFNetworking's `AFPercentEscapedStringFromString`.
///
/// Only `A-Z a-z 0-9 - . _ ~ / ?` stay literal (RFC 3986 §3.4 allows `/` and `?` in a query,
/// and AFNetworking removes `:#[]@!$&'()*+,;=` from the allowed set); every other byte of
/// the UTF-8 form becomes `%XX` with upper-case hex. Escaping works on whole UTF-8 scalars,
/// so a grapheme cluster is never split, whatever its length.
enum PercentEscaping {
    /// `true` for the bytes that stay literal; a 256-entry table so the hot loop is one load per byte.
    static let literalTable: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for byte in UInt8(ascii: "A")...UInt8(ascii: "Z") { table[Int(byte)] = true }
        for byte in UInt8(ascii: "a")...UInt8(ascii: "z") { table[Int(byte)] = true }
        for byte in UInt8(ascii: "0")...UInt8(ascii: "9") { table[Int(byte)] = true }
        for character in "-._~/?".utf8 { table[Int(character)] = true }
        return table
    }()

    static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)
}

extension QueryString {
    /// Percent-escapes `string` for a query key or value.
    ///
    /// `percentEscaped(":#[]@!$&'()*+,;=?/")` is `"%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D?/"`.
    /// A Swift `String` always holds valid Unicode, so this cannot fail; text that may hold a
    /// lone UTF-16 surrogate (from an `NSString` or a file) goes through ``percentEscaped(utf16:)``.
    public static func percentEscaped(_ string: String) -> String {
        let writer = ByteWriter(capacity: string.utf8.count * 3)
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

extension CourierError.Code {
    /// Text with a lone UTF-16 surrogate, which cannot be written as UTF-8.
    public static let unpairedSurrogate = CourierError.Code("unpairedSurrogate")
}

/// The order AFNetworking sorts dictionary keys and set members in: `NSString` comparison
/// code unit by code unit in UTF-16, with no locale and no normalization.
///
/// Computed on UTF-8 without transcoding. UTF-8 byte order equals scalar order, which equals
/// UTF-16 order except that UTF-16 puts scalars above U+FFFF (surrogate pairs, D800–DBFF)
/// before U+E000–U+FFFF. The first differing byte of two strings is either in the same
/// position of same-length scalars, or a pair of lead bytes; only the lead bytes 0xEE–0xEF
/// (U+E000–U+FFFF) and 0xF0–0xF4 (above U+FFFF) need swapping.
enum OrdinalOrder {
    /// Whether `lhs` sorts before `rhs`.
    static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        var left = lhs.utf8.makeIterator()
        var right = rhs.utf8.makeIterator()
        while true {
            guard let leftByte = left.next() else { return right.next() != nil }
            guard let rightByte = right.next() else { return false }
            if leftByte != rightByte { return rank(leftByte) < rank(rightByte) }
        }
    }

    @inline(__always)
    private static func rank(_ byte: UInt8) -> UInt16 {
        switch byte {
        case 0xF0...0xF4: return UInt16(byte) - 0xF0 + 0xEE  // 0xEE...0xF2
        case 0xEE...0xEF: return UInt16(byte) + 5  // 0xF3...0xF4
        default: return UInt16(byte)
        }
    }
}

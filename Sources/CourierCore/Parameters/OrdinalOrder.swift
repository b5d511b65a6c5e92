import Foundation

/// The order AFNetworking sorts dictionary keys and set members in: `NSString` comparison
/// code unit by code unit in UTF-16, with no locale and no normalization.
///
/// Computed on UTF-8 without transcoding. UTF-8 byte order equals scalar order, which equals
/// UTF-16 order except that UTF-16 puts scalars above U+FFFF (surrogate pairs, D800–DBFF)
/// before U+E000–U+FFFF. The first differing byte of two strings is either in the same
/// position of same-length scalars, or a pair of lead bytes; only the lead bytes 0xEE–0xEF
/// (U+E000–U+FFFF) and 0xF0–0xF4 (above U+FFFF) need swapping.
enum OrdinalOrder {
    /// Whether `lhs` sorts before `rhs`. Native strings are compared in place, byte by byte.
    static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        let result = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in precedes(left, right) }
        }
        if let result, let result { return result }
        return precedes(Array(lhs.utf8), Array(rhs.utf8))
    }

    static func precedes<Bytes: RandomAccessCollection>(_ left: Bytes, _ right: Bytes) -> Bool
    where Bytes.Element == UInt8, Bytes.Index == Int {
        let common = Swift.min(left.count, right.count)
        var index = 0
        while index < common {
            let leftByte = left[left.startIndex + index]
            let rightByte = right[right.startIndex + index]
            if leftByte != rightByte { return rank(leftByte) < rank(rightByte) }
            index += 1
        }
        return left.count < right.count
    }

    /// Appends one ``Slot`` per entry of `dictionary` to `slots` and sorts those new slots
    /// into ordinal order of their keys; the slots already in `slots` are left as they are.
    ///
    /// Callers keep one `slots` array for a whole walk and use it as a stack (a nested
    /// dictionary appends its slots after its parent's and removes them when done), so no
    /// dictionary costs an allocation of its own. Most comparisons are decided by the first 16
    /// rank-mapped bytes held in the slots; only keys that agree there read their text again.
    static func appendSorted(_ dictionary: [String: ParameterValue], to slots: inout [Slot]) {
        let start = slots.count
        var index = dictionary.startIndex
        while index != dictionary.endIndex {
            var key = dictionary.keys[index]
            slots.append(key.withUTF8 { Slot(key: $0, index: index) })
            dictionary.formIndex(after: &index)
        }
        guard slots.count - start > 1 else { return }
        slots.withUnsafeMutableBufferPointer { buffer in
            OrdinalOrder.sort(UnsafeMutableBufferPointer(rebasing: buffer[start...]), keysIn: dictionary)
        }
    }

    /// Where one key of a dictionary is, with its first 16 bytes mapped by ``rank(_:)`` and
    /// packed big-endian (zero-padded) so that two integer comparisons order most keys.
    struct Slot {
        let head: UInt64
        let tail: UInt64
        let length: Int
        /// The entry's position in its dictionary.
        let index: Dictionary<String, ParameterValue>.Index

        init(key: UnsafeBufferPointer<UInt8>, index: Dictionary<String, ParameterValue>.Index) {
            self.head = Self.packedWord(key, from: 0)
            self.tail = key.count > 8 ? Self.packedWord(key, from: 8) : 0
            self.length = key.count
            self.index = index
        }

        /// Up to eight bytes of `key` from `start`, rank-mapped, big-endian, zero-padded. A
        /// full word is one unaligned load (a `memcpy` into the word would stall the load that
        /// follows it); only a word with a byte ≥ 0x80 is remapped byte by byte.
        @inline(__always)
        private static func packedWord(_ key: UnsafeBufferPointer<UInt8>, from start: Int) -> UInt64 {
            guard let base = key.baseAddress, start < key.count else { return 0 }
            var word: UInt64 = 0
            if key.count - start >= 8 {
                // Memory order to numeric order: the first byte becomes the most significant.
                word = UInt64(bigEndian: UnsafeRawPointer(base + start).loadUnaligned(as: UInt64.self))
            } else {
                var shift: UInt64 = 56
                for offset in start..<key.count {
                    word |= UInt64(base[offset]) &<< shift
                    shift &-= 8
                }
            }
            guard word & 0x8080_8080_8080_8080 != 0 else { return word }
            var mapped: UInt64 = 0
            for shift in stride(from: 56, through: 0, by: -8) {
                mapped |= UInt64(rank(UInt8(truncatingIfNeeded: word &>> UInt64(shift)))) &<< UInt64(shift)
            }
            return mapped
        }

        /// Whether this slot's key sorts before `other`'s; both belong to `dictionary`.
        @inline(__always)
        func precedes(_ other: Slot, in dictionary: [String: ParameterValue]) -> Bool {
            if head != other.head { return head < other.head }
            if tail != other.tail { return tail < other.tail }
            // Equal padded prefixes: when both keys fit in them, the shorter is a prefix of the longer.
            if length <= 16 && other.length <= 16 { return length < other.length }
            return OrdinalOrder.precedes(dictionary.keys[index], dictionary.keys[other.index])
        }
    }

    /// The byte's place in UTF-16 order; every byte of valid UTF-8 maps into 0x00–0xF4.
    @inline(__always)
    private static func rank(_ byte: UInt8) -> UInt8 {
        switch byte {
        case 0xF0...0xF4: return byte &- 2  // 0xEE...0xF2
        case 0xEE...0xEF: return byte &+ 5  // 0xF3...0xF4
        default: return byte
        }
    }
}

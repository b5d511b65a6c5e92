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
            var mine = UnsafeMutableBufferPointer(rebasing: buffer[start...])
            if mine.count <= 16 {
                // Insertion sort: no scratch buffer, and few comparisons at this size.
                var sorted = 1
                while sorted < mine.count {
                    let slot = mine[sorted]
                    var position = sorted
                    while position > 0, slot.precedes(mine[position - 1], in: dictionary) {
                        mine[position] = mine[position - 1]
                        position -= 1
                    }
                    mine[position] = slot
                    sorted += 1
                }
            } else {
                // Keys are unique, so an unstable order would be the same; the standard sort is fine.
                mine.sort { $0.precedes($1, in: dictionary) }
            }
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
            var head: UInt64 = 0
            var tail: UInt64 = 0
            for offset in 0..<Swift.min(key.count, 16) {
                let mapped = UInt64(rank(key[offset]))
                if offset < 8 {
                    head |= mapped &<< UInt64(56 - 8 * offset)
                } else {
                    tail |= mapped &<< UInt64(120 - 8 * offset)
                }
            }
            self.head = head
            self.tail = tail
            self.length = key.count
            self.index = index
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

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

    /// The entries of `dictionary` in ordinal order of their keys.
    static func sortedEntries(_ dictionary: [String: ParameterValue]) -> [(key: String, value: ParameterValue)] {
        sortedIndices(dictionary).map { dictionary[$0] }
    }

    /// The indices of `dictionary` in ordinal order of their keys.
    ///
    /// Indices carry no reference counts, so sorting them costs only comparisons. Small
    /// dictionaries use an insertion sort. Larger ones copy every key's rank-mapped UTF-8 into
    /// one buffer and compare with `memcmp`.
    static func sortedIndices(_ dictionary: [String: ParameterValue]) -> [Dictionary<String, ParameterValue>.Index] {
        var indices = Array(dictionary.indices)
        if indices.count <= 12 {
            var index = 1
            while index < indices.count {
                var position = index
                while position > 0, precedes(dictionary[indices[position]].key, dictionary[indices[position - 1]].key) {
                    indices.swapAt(position, position - 1)
                    position -= 1
                }
                index += 1
            }
            return indices
        }
        var totalBytes = 0
        for key in dictionary.keys { totalBytes += key.utf8.count }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(totalBytes)
        var offsets: [Int] = [0]
        offsets.reserveCapacity(indices.count + 1)
        var order: [SortKey] = []
        order.reserveCapacity(indices.count)
        for index in indices {
            let start = bytes.count
            var prefix: UInt64 = 0
            for byte in dictionary[index].key.utf8 {
                let mapped = UInt8(truncatingIfNeeded: rank(byte))
                if bytes.count - start < 8 { prefix |= UInt64(mapped) << (56 - 8 * UInt64(bytes.count - start)) }
                bytes.append(mapped)
            }
            order.append(SortKey(prefix: prefix, slot: offsets.count - 1))
            offsets.append(bytes.count)
        }
        bytes.withUnsafeBufferPointer { keyBytes in
            offsets.withUnsafeBufferPointer { offsets in
                let base = keyBytes.baseAddress
                order.sort { left, right in
                    // The first eight bytes decide almost every comparison without touching the keys.
                    if left.prefix != right.prefix { return left.prefix < right.prefix }
                    let leftStart = offsets[left.slot], leftCount = offsets[left.slot + 1] - leftStart
                    let rightStart = offsets[right.slot], rightCount = offsets[right.slot + 1] - rightStart
                    let common = Swift.min(leftCount, rightCount)
                    if common > 8, let base {
                        let compared = memcmp(base + leftStart + 8, base + rightStart + 8, common - 8)
                        if compared != 0 { return compared < 0 }
                    }
                    return leftCount < rightCount
                }
            }
        }
        return order.map { indices[$0.slot] }
    }

    /// A key's first eight rank-mapped bytes, big-endian, zero-padded, and where the key is.
    private struct SortKey {
        var prefix: UInt64
        var slot: Int
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

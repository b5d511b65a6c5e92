/// gzip (RFC 1952) and zlib (RFC 1950) framing around deflate "stored" blocks (RFC 1951 §3.2.4).
///
/// Stored blocks carry the bytes uncompressed, so the output is a valid stream that any
/// inflater reads, without the server depending on zlib. The test server only needs clients
/// to prove they decode the framing and checksums; ratio does not matter.
enum StoredDeflate {
    /// `bytes` as a gzip member: header, stored blocks, CRC-32 and length trailer.
    static func gzip(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
        appendBlocks(bytes, to: &output)
        appendLittleEndian(crc32(bytes), to: &output)
        appendLittleEndian(UInt32(truncatingIfNeeded: bytes.count), to: &output)
        return output
    }

    /// `bytes` as a zlib stream (what HTTP calls `deflate`): header, stored blocks, Adler-32.
    static func zlib(_ bytes: [UInt8]) -> [UInt8] {
        // 0x78 0x01: deflate with a 32 KiB window, no dictionary, check bits making it a multiple of 31.
        var output: [UInt8] = [0x78, 0x01]
        appendBlocks(bytes, to: &output)
        let checksum = adler32(bytes)
        output.append(contentsOf: [
            UInt8(checksum >> 24), UInt8(truncatingIfNeeded: checksum >> 16),
            UInt8(truncatingIfNeeded: checksum >> 8), UInt8(truncatingIfNeeded: checksum),
        ])
        return output
    }

    private static func appendBlocks(_ bytes: [UInt8], to output: inout [UInt8]) {
        var start = 0
        repeat {
            let length = min(65_535, bytes.count - start)
            let isFinal = start + length == bytes.count
            // BFINAL in bit 0, BTYPE 00 (stored); the rest of the byte is padding to the boundary.
            output.append(isFinal ? 1 : 0)
            let size = UInt16(length)
            output.append(contentsOf: [UInt8(truncatingIfNeeded: size), UInt8(size >> 8)])
            output.append(contentsOf: [UInt8(truncatingIfNeeded: ~size), UInt8((~size) >> 8)])
            output.append(contentsOf: bytes[start..<(start + length)])
            start += length
        } while start < bytes.count
    }

    private static func appendLittleEndian(_ value: UInt32, to output: inout [UInt8]) {
        output.append(contentsOf: [
            UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
            UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24),
        ])
    }

    private static let crcTable: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// CRC-32 (ISO 3309, as gzip uses).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }

    /// Adler-32 (RFC 1950).
    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var low: UInt32 = 1
        var high: UInt32 = 0
        for byte in bytes {
            low = (low + UInt32(byte)) % 65_521
            high = (high + low) % 65_521
        }
        return high << 16 | low
    }
}

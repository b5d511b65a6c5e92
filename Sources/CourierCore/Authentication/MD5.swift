import Foundation

/// MD5 (RFC 1321), for HTTP Digest authentication's `MD5` algorithm (RFC 7616), which servers
/// still offer first. Not for anything that needs a secure hash: MD5 is broken as one.
enum MD5 {
    /// The lowercase hex digest of `bytes`.
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        digest(Array(bytes)).map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }

    /// The 16-byte digest of `message`.
    static func digest(_ message: [UInt8]) -> [UInt8] {
        var padded = message
        let bitLength = UInt64(message.count) &* 8
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        for shift in stride(from: 0, to: 64, by: 8) {
            padded.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }

        var a0: UInt32 = 0x6745_2301
        var b0: UInt32 = 0xefcd_ab89
        var c0: UInt32 = 0x98ba_dcfe
        var d0: UInt32 = 0x1032_5476
        var words = [UInt32](repeating: 0, count: 16)
        for block in stride(from: 0, to: padded.count, by: 64) {
            for index in 0..<16 {
                let offset = block + index * 4
                words[index] =
                    UInt32(padded[offset]) | UInt32(padded[offset + 1]) << 8 | UInt32(padded[offset + 2]) << 16
                    | UInt32(padded[offset + 3]) << 24
            }
            var (a, b, c, d) = (a0, b0, c0, d0)
            for step in 0..<64 {
                var mixed: UInt32
                let word: Int
                switch step {
                case 0..<16:
                    mixed = (b & c) | (~b & d)
                    word = step
                case 16..<32:
                    mixed = (d & b) | (~d & c)
                    word = (5 * step + 1) % 16
                case 32..<48:
                    mixed = b ^ c ^ d
                    word = (3 * step + 5) % 16
                default:
                    mixed = c ^ (b | ~d)
                    word = (7 * step) % 16
                }
                mixed = mixed &+ a &+ constants[step] &+ words[word]
                a = d
                d = c
                c = b
                b = b &+ ((mixed << shifts[step]) | (mixed >> (32 - shifts[step])))
            }
            a0 = a0 &+ a
            b0 = b0 &+ b
            c0 = c0 &+ c
            d0 = d0 &+ d
        }
        return [a0, b0, c0, d0].flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> ($0 * 8)) } }
    }

    /// The per-step left rotations.
    private static let shifts: [UInt32] =
        [7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22]
        + [5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20]
        + [4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23]
        + [6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21]

    /// floor(abs(sin(i + 1)) * 2^32) for each step, as RFC 1321 §3.4 defines them.
    private static let constants: [UInt32] = (0..<64).map { step in
        UInt32(truncatingIfNeeded: Int64((abs(sin(Double(step + 1))) * 4_294_967_296).rounded(.down)))
    }
}

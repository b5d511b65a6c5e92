import CourierDigest
import Foundation
import Testing

/// The package's SHA-256 against FIPS 180-4's examples and Python's hashlib, fed whole, split
/// at every byte, and through both block functions (the CPU's SHA instructions and the portable one).
@Suite("SHA-256")
struct SHA256Tests {
    /// Inputs with digests from FIPS 180-4's examples (the first four) and `hashlib.sha256`.
    static let vectors: [(name: String, bytes: [UInt8], digest: String)] = [
        ("empty", [], "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", Array("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "448 bits: the length fits in the last block",
            Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "896 bits: padding takes a block of its own",
            Array(
                ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                    + "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu").utf8),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
        (
            "a million a's", [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        ),
        (
            "1 MiB and 13 bytes of a pattern", pattern(count: (1 << 20) + 13),
            "27f073e66e733e30e198a797d2035c5d7cdee4d4ffd21e3c39ea3d52b0859187"
        ),
    ]

    static func pattern(count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
    }

    @Test("known digests, whole and through the portable block function")
    func knownDigests() {
        for vector in Self.vectors {
            #expect(SHA256.hash(data: vector.bytes).hexString == vector.digest, "\(vector.name)")
            let portable = SHA256.withPortableCode { SHA256.hash(data: vector.bytes) }
            #expect(portable.hexString == vector.digest, "\(vector.name), portable")
        }
    }

    @Test("fed in two pieces cut at every byte of the first 200, the digest is the same")
    func everyCut() {
        for vector in Self.vectors where vector.bytes.count < 200 {
            for cut in 0...vector.bytes.count {
                var hasher = SHA256()
                hasher.update(data: vector.bytes[..<cut])
                hasher.update(data: vector.bytes[cut...])
                #expect(hasher.finalize().hexString == vector.digest, "\(vector.name) cut at \(cut)")
            }
        }
        let long = Self.vectors[5]
        var hasher = SHA256()
        var offset = 0
        var step = 1
        while offset < long.bytes.count {
            let end = min(long.bytes.count, offset + step)
            long.bytes[offset..<end].withUnsafeBytes { hasher.update(bufferPointer: $0) }
            offset = end
            step = step % 4099 + 61
        }
        #expect(hasher.finalize().hexString == long.digest)
    }

    @Test("lengths 0 to 300: both block functions agree; a digest taken midway ends nothing")
    func bothBlockFunctionsAgree() {
        let bytes = Self.pattern(count: 300)
        var running = SHA256()
        for length in 0...bytes.count {
            let prefix = bytes[..<length]
            let digest = SHA256.hash(data: prefix)
            #expect(SHA256.withPortableCode { SHA256.hash(data: prefix) } == digest, "length \(length)")
            #expect(running.finalize() == digest, "length \(length), running")
            if length < bytes.count { running.update(data: bytes[length..<length + 1]) }
        }
        #expect(SHA256Digest.byteCount == 32)
        #expect(SHA256.hash(data: Data()).bytes.count == 32)
    }

    @Test("the CPU's SHA extensions are found where Linux reports them")
    func cpuInstructionsWhereTheKernelSeesThem() throws {
        #if os(Linux) && arch(x86_64)
            let info = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
            let flags = info.split(separator: "\n").first { $0.hasPrefix("flags") } ?? ""
            let hasSHA = flags.split(separator: " ").contains("sha_ni")
            #expect(SHA256.cpuHasSHAInstructions == hasSHA, "cpuinfo flags: \(flags)")
        #endif
    }

    @Test("lowercase hex, two digits a byte")
    func hex() {
        #expect([0x00, 0x0F, 0xA0, 0xFF].hexString == "000fa0ff")
        #expect([UInt8]().hexString == "")
        #expect("\(SHA256.hash(data: [UInt8]()))" == Self.vectors[0].digest)
    }
}

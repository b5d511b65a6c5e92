import CCourierSHA256
import Foundation

/// SHA-256 (FIPS 180-4) of bytes fed in pieces: how the test server, the demo and the tests
/// check that a body arrived intact. Not a cryptography API: it has no constant-time guarantees
/// and no other algorithms, and it is internal to the package.
package struct SHA256: Sendable {
    private var context = courier_sha256_context()

    /// Starts an empty computation.
    package init() {
        courier_sha256_init(&context)
    }

    /// Adds the bytes in `bufferPointer`.
    package mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        guard let base = bufferPointer.baseAddress, !bufferPointer.isEmpty else { return }
        courier_sha256_update(&context, base, bufferPointer.count)
    }

    /// Adds the bytes of `data`, region by region.
    package mutating func update(data: some DataProtocol) {
        for region in data.regions {
            region.withUnsafeBytes { update(bufferPointer: $0) }
        }
    }

    /// The digest of everything added so far; the computation can go on after it.
    package func finalize() -> SHA256Digest {
        var finished = context
        var bytes = [UInt8](repeating: 0, count: SHA256Digest.byteCount)
        bytes.withUnsafeMutableBufferPointer { courier_sha256_final(&finished, $0.baseAddress) }
        return SHA256Digest(bytes: bytes)
    }

    /// The digest of `data`.
    package static func hash(data: some DataProtocol) -> SHA256Digest {
        var hasher = SHA256()
        hasher.update(data: data)
        return hasher.finalize()
    }

    /// Whether the CPU has the SHA instructions the block function uses when it can (x86-64's
    /// SHA extensions); without them, the portable code runs.
    package static var cpuHasSHAInstructions: Bool { courier_sha256_cpu_has_instructions() != 0 }

    /// Runs `body` with the portable block function forced on, for tests that check both paths
    /// agree. The switch is process-wide, and safe at any moment: both block functions keep the
    /// same state, so computations elsewhere stay correct and are only slower meanwhile.
    package static func withPortableCode<T>(_ body: () throws -> T) rethrows -> T {
        courier_sha256_force_portable(1)
        defer { courier_sha256_force_portable(0) }
        return try body()
    }
}

/// A SHA-256 digest: 32 bytes, iterable, printed as lowercase hex.
package struct SHA256Digest: Hashable, Sendable, Sequence, CustomStringConvertible {
    /// The size of a digest in bytes.
    package static let byteCount = 32

    /// The digest's bytes.
    package let bytes: [UInt8]

    package var description: String { hexString }

    package func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
}

extension Sequence where Element == UInt8 {
    /// The bytes as lowercase hex digits, two per byte, as `sha256sum` prints digests.
    package var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

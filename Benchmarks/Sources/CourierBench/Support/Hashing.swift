import Crypto
import Foundation

/// Lower-case hex sha256, the form the test server's upload sink reports.
func sha256Hex<Bytes: DataProtocol>(_ bytes: Bytes) -> String {
    SHA256.hash(data: bytes).map { byte in
        let hex = String(byte, radix: 16)
        return hex.count == 1 ? "0" + hex : hex
    }.joined()
}

/// An incremental sha256 for bodies read piece by piece.
struct StreamingDigest {
    private var hasher = SHA256()
    mutating func update(_ bytes: UnsafeRawBufferPointer) { hasher.update(bufferPointer: bytes) }
    func finalize() -> String {
        hasher.finalize().map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined()
    }
}

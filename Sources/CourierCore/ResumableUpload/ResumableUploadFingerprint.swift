import CourierDigest
import Foundation

/// What identifies one upload of one file to one endpoint across runs: the file's path, size
/// and modification time, the endpoint's URL and the protocol. A file that changed in any of
/// these starts a new upload instead of appending to an old one.
public struct ResumableUploadFingerprint: Sendable, Hashable, Codable {
    /// The file's absolute path, or a caller's name for a body that is no file.
    public var path: String
    /// The number of bytes uploaded.
    public var size: Int64
    /// The file's modification time in nanoseconds since 1970, or 0 for a body that is no file.
    public var modificationTime: Int64
    /// The URL the upload was created at.
    public var endpoint: String
    /// The protocol the upload speaks.
    public var protocolName: String

    /// Makes a fingerprint of its parts.
    public init(path: String, size: Int64, modificationTime: Int64, endpoint: String, protocolName: String) {
        self.path = path
        self.size = size
        self.modificationTime = modificationTime
        self.endpoint = endpoint
        self.protocolName = protocolName
    }

    /// A name safe as a file name (SHA-256 of the parts, hex), for stores that keep one file per upload.
    public var key: String {
        let canonical = [protocolName, endpoint, path, String(size), String(modificationTime)].joined(separator: "\n")
        return SHA256.hash(data: Array(canonical.utf8)).hexString
    }
}

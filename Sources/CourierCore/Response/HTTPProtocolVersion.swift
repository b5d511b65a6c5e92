/// The HTTP version a response arrived in, such as HTTP/1.1 or HTTP/2.
///
/// Printed as a status line prints it (RFC 9112 §4 for HTTP/1.x, and `HTTP/2`, `HTTP/3` for the
/// versions whose minor number is always zero, as curl does).
public struct HTTPProtocolVersion: Sendable, Hashable, CustomStringConvertible {
    /// The major version: 1 for HTTP/1.0 and HTTP/1.1, 2 for HTTP/2.
    public var major: Int
    /// The minor version: 1 for HTTP/1.1, 0 otherwise.
    public var minor: Int

    /// Makes a version from its two numbers.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// HTTP/1.0.
    public static let http10 = HTTPProtocolVersion(major: 1, minor: 0)
    /// HTTP/1.1.
    public static let http11 = HTTPProtocolVersion(major: 1, minor: 1)
    /// HTTP/2.
    public static let http2 = HTTPProtocolVersion(major: 2, minor: 0)

    /// `HTTP/1.1`, `HTTP/2`.
    public var description: String { "HTTP/\(versionNumber)" }

    /// `1.1`, `2`: the number alone, as OpenTelemetry's `network.protocol.version` spells it.
    public var versionNumber: String { major >= 2 && minor == 0 ? "\(major)" : "\(major).\(minor)" }
}

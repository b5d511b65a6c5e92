#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP socket listening on 127.0.0.1 that never accepts: the kernel completes clients'
/// handshakes into its backlog, so a client connects and then waits for bytes that never come
/// (a TLS ServerHello, an HTTP response). Closing it (``close()``, or its deinit) frees the port,
/// which another test may then take: ``port`` is a free port only while the listener lives.
package final class SilentListener: @unchecked Sendable {
    /// The port it listens on.
    package let port: Int
    private let descriptor: Int32
    private var isOpen = true

    /// Listens on an ephemeral port of 127.0.0.1.
    /// - Throws: `SilentListener.Failure` when the socket cannot be made, bound or listened on.
    package init() throws {
        #if canImport(Darwin)
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #else
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && listen(descriptor, 16) == 0
                    && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard descriptor >= 0, ready else {
            if descriptor >= 0 { _ = Self.closeDescriptor(descriptor) }
            throw Failure()
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Stops listening; the port is free again.
    package func close() {
        guard isOpen else { return }
        isOpen = false
        _ = Self.closeDescriptor(descriptor)
    }

    deinit { close() }

    private static func closeDescriptor(_ descriptor: Int32) -> Int32 {
        #if canImport(Glibc)
            Glibc.close(descriptor)
        #elseif canImport(Musl)
            Musl.close(descriptor)
        #else
            Darwin.close(descriptor)
        #endif
    }

    /// The listener could not be set up.
    package struct Failure: Error {}
}

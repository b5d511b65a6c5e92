#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writing a whole buffer to a file descriptor, the one loop behind stdout, a saved download
/// and a session file; each caller words the failure for what it was writing.
enum DescriptorWrites {
    /// Writes every byte of `buffer` to `descriptor`, again after a short write or `EINTR`.
    /// - Returns: nil when all was written, else the `errno` that stopped it.
    static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32? {
        guard var pointer = buffer.baseAddress else { return nil }
        var remaining = buffer.count
        while remaining > 0 {
            let written = write(descriptor, pointer, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            // write(2) returns 0 only for a zero count; treat it as "no space" rather than spin.
            if written == 0 { return ENOSPC }
            pointer += written
            remaining -= written
        }
        return nil
    }
}

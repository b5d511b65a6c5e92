import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The permission bits a file created the ordinary way gets: `0666 & ~umask`, what `open(2)`
/// with mode 0666 gives, as curl, wget and the shell's `>` do.
///
/// Downloads are first written to private (0600) temporary files, and a rename keeps that mode,
/// so a finished download is given these bits before it appears under its name.
package enum NewFileMode {
    private static let lock = NSLock()

    /// `0666 & ~umask`.
    package static var bits: mode_t { 0o666 & ~currentMask() }

    /// The process's umask. On Linux it is read from `/proc/self/status` (since 4.7), because
    /// `umask(2)` can only be read by setting it, and a file created by another thread between
    /// the two calls would get the wrong mode; elsewhere, or when that line is missing, it is set
    /// and restored under a lock, which keeps out Courier's own callers at least.
    package static func currentMask() -> mode_t {
        #if os(Linux)
            if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
                let value = mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8)
            {
                return value & 0o777
            }
        #endif
        return lock.withLock {
            let mask = umask(0o022)
            umask(mask)
            return mask & 0o777
        }
    }
}

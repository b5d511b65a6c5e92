import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Puts a finished download (a file in the exchange's scratch directory) at the path the user
/// named, as the user's own file, the way curl and the shell's `>` do.
///
/// - Nothing there: the scratch file is given `0666 & ~umask` and linked into place, atomically
///   (the bytes are written once); `link(2)` never replaces a file that appeared meanwhile.
/// - Anything there, or a link that cannot be made (another file system): the path is opened
///   with `O_WRONLY | O_CREAT | O_TRUNC` and the bytes copied in. Nothing is unlinked or renamed
///   over: a regular file keeps its inode, mode, owner and other hard links; a symbolic link
///   stays one and its target gets the bytes (a dangling link's target is created); a device
///   node or FIFO stays what it is (a FIFO waits for a reader, as `curl -o fifo` does); a socket
///   cannot be opened and is an error.
///
/// The copy happens once the bytes are complete, so a failed or refused download (a non-2xx
/// answer goes to stdout) leaves an existing file as it was.
enum DownloadWriter {
    /// Writes all of `file` to `path`.
    /// - Throws: ``CLIError`` naming `path` when it cannot be opened or written.
    static func write(_ file: URL, to path: String) throws {
        var info = stat()
        if lstat(path, &info) != 0, errno == ENOENT {
            // The scratch file is private (0600) while it fills; the saved one is an ordinary new file.
            chmod(file.path, NewFileMode.bits)
            if link(file.path, path) == 0 { return }
        }
        try copy(file, to: path, flags: O_CREAT | O_TRUNC)
    }

    /// Appends all of `file` to `path` (a resumed download's 206 body).
    /// - Throws: ``CLIError`` naming `path` when it cannot be opened or written.
    static func append(_ file: URL, to path: String) throws {
        try copy(file, to: path, flags: O_APPEND)
    }

    private static func copy(_ file: URL, to path: String, flags: Int32) throws {
        let reader = open(file.path, O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { throw failure("cannot read the downloaded bytes", file.path) }
        defer { close(reader) }
        // 0666: a file this creates gets the umask's mode, as open(2) gives any new file.
        let writer = open(path, O_WRONLY | O_CLOEXEC | flags, 0o666)
        guard writer >= 0 else { throw failure("cannot open \"\(path)\" to write the download", nil) }
        do {
            try pump(from: reader, to: writer, path: path)
        } catch {
            close(writer)
            throw error
        }
        // A file system that writes back late (NFS) reports its failure here.
        guard close(writer) == 0 else { throw failure("cannot write the download to \"\(path)\"", nil) }
    }

    /// Copies until the end of `reader`: `sendfile(2)` on Linux (no copy through user space; any
    /// file as the output since 2.6.33), `read`/`write` where it is refused or missing.
    private static func pump(from reader: Int32, to writer: Int32, path: String) throws {
        #if os(Linux)
            while true {
                let sent = sendfile(writer, reader, nil, 1 << 30)
                if sent > 0 { continue }
                if sent == 0 { return }
                if errno == EINTR || errno == EAGAIN { continue }
                if errno == EINVAL || errno == ENOSYS { break }
                throw failure("cannot write the download to \"\(path)\"", nil)
            }
        #endif
        let size = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(reader, buffer, size)
            if count == 0 { return }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("cannot read the downloaded bytes", nil)
            }
            if let code = DescriptorWrites.writeAll(UnsafeRawBufferPointer(start: buffer, count: count), to: writer) {
                errno = code
                throw failure("cannot write the download to \"\(path)\"", nil)
            }
        }
    }

    private static func failure(_ what: String, _ path: String?) -> CLIError {
        let reason = String(cString: strerror(errno))
        return CLIError.failure(path.map { "\(what) (\($0)): \(reason)" } ?? "\(what): \(reason)")
    }
}

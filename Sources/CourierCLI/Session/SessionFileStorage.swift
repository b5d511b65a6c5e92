import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads and writes a session file where the user points `--session`, without replacing what
/// is there by something else (issue 48: a rename over the path turned a device node into a
/// regular file, a symbolic link into a copy, and broke hard links).
///
/// - A symbolic link is followed: its target is the file read and written, the link stays.
/// - A regular file with one name is replaced atomically (a temporary file renamed over it),
///   keeping its mode; one with other hard links is rewritten in place, so every name sees it.
/// - A character device or FIFO is written through, as `curl -c` writes through one.
/// - A directory, socket or block device is refused.
enum SessionFileStorage {
    /// More than any session file holds; stops a read of `/dev/zero` or a huge file.
    static let readLimit = 16 << 20

    /// The bytes at `path` (following links), or nil when nothing is there.
    /// - Throws: ``CLIError`` naming the path when it cannot be read or is too large.
    static func contents(of path: String) throws -> Data? {
        let target = resolved(path)
        var info = stat()
        if stat(target, &info) != 0 {
            if errno == ENOENT { return nil }
            throw CLIError.failure("cannot read the session file \(path): \(String(cString: strerror(errno)))")
        }
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFREG || kind == S_IFCHR || kind == S_IFIFO else {
            throw CLIError.failure("cannot read the session file \(path): \(describe(kind))")
        }
        let descriptor = open(target, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CLIError.failure("cannot read the session file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var bytes = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            if count < 0 {
                throw CLIError.failure("cannot read the session file \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: buffer[0..<count])
            if bytes.count > readLimit {
                throw CLIError.failure("the session file \(path) is larger than \(readLimit >> 20) MiB")
            }
        }
    }

    /// Writes `data` at `path` as the type comment describes; a new file is created owner-only,
    /// with the directories leading to it.
    /// - Throws: ``CLIError`` naming the path when it cannot be written.
    static func save(_ data: Data, to path: String) throws {
        let target = resolved(path)
        var info = stat()
        guard lstat(target, &info) == 0 else {
            guard errno == ENOENT else { throw failure(path) }
            let directory = (target as NSString).deletingLastPathComponent
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw CLIError.failure("cannot write the session file \(path): cannot create \(directory)")
            }
            return try replace(target, with: data, mode: 0o600, naming: path)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG where info.st_nlink > 1:
            try writeThrough(target, data, flags: O_TRUNC, naming: path)
        case S_IFREG:
            try replace(target, with: data, mode: info.st_mode & 0o7777, naming: path)
        case S_IFCHR, S_IFIFO:
            // A FIFO's open waits for a reader, as `curl -c fifo` waits.
            try writeThrough(target, data, flags: 0, naming: path)
        case let kind:
            throw CLIError.failure("cannot write the session file \(path): \(describe(kind))")
        }
    }

    /// `path` with its symbolic links followed as far as they lead: a dangling link gives the
    /// path its last link names, so the file is created there, as `>` creates it.
    static func resolved(_ path: String) -> String {
        var current = path
        // The kernel's own limit on links in one lookup (ELOOP beyond it).
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count > 0 else { return current }
            let destination = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current =
                destination.hasPrefix("/")
                ? destination
                : ((current as NSString).deletingLastPathComponent as NSString).appendingPathComponent(destination)
        }
        return current
    }

    private static func describe(_ kind: mode_t) -> String {
        switch kind {
        case S_IFDIR: return "it is a directory"
        case S_IFSOCK: return "it is a socket"
        case S_IFBLK: return "it is a block device"
        default: return "it is not a regular file"
        }
    }

    private static func failure(_ path: String) -> CLIError {
        CLIError.failure("cannot write the session file \(path): \(String(cString: strerror(errno)))")
    }

    /// A private temporary file in `target`'s directory, given `mode` once full, renamed over it.
    private static func replace(_ target: String, with data: Data, mode: mode_t, naming path: String) throws {
        let directory = (target as NSString).deletingLastPathComponent
        let name = (target as NSString).lastPathComponent
        let temporary = (directory as NSString).appendingPathComponent(".\(name).\(UUID().uuidString)")
        // Credentials live here: owner-only until it holds everything and takes the old mode.
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure(path) }
        let written = writeAll(data, to: descriptor) && fchmod(descriptor, mode) == 0
        let writeError = failure(path)
        // Closed once whatever happened: a second close could take a descriptor another thread
        // (an event loop) has just been given the same number for.
        guard close(descriptor) == 0, written else {
            unlink(temporary)
            throw written ? failure(path) : writeError
        }
        guard rename(temporary, target) == 0 else {
            let error = failure(path)
            unlink(temporary)
            throw error
        }
    }

    private static func writeThrough(_ target: String, _ data: Data, flags: Int32, naming path: String) throws {
        let descriptor = open(target, O_WRONLY | O_CLOEXEC | flags)
        guard descriptor >= 0 else { throw failure(path) }
        guard writeAll(data, to: descriptor) else {
            let error = failure(path)
            close(descriptor)
            throw error
        }
        guard close(descriptor) == 0 else { throw failure(path) }
    }

    /// Sets `errno` when it fails, for ``failure(_:)``.
    private static func writeAll(_ data: Data, to descriptor: Int32) -> Bool {
        guard let code = data.withUnsafeBytes({ DescriptorWrites.writeAll($0, to: descriptor) }) else { return true }
        errno = code
        return false
    }
}

import Foundation
import NIOCore

/// The temporary file a download streams into: written chunk by chunk with `write(2)`, so
/// memory stays at one chunk whatever the size, then moved into place atomically.
final class DownloadFile {
    let url: URL
    private var descriptor: Int32
    private(set) var bytesWritten: Int64

    /// Creates a new file in `directory` (a dot file when `hidden`, for a directory that is the
    /// user's rather than a temporary one), or opens `partialFile` to append to it.
    /// - Throws: ``CourierError`` `.downloadFailed`.
    convenience init(
        directory: URL, appendingTo partialFile: URL? = nil, truncating: Bool = false, hidden: Bool = false
    ) throws {
        let name = "\(hidden ? "." : "")courier-\(UUID().uuidString).download"
        let url = partialFile ?? directory.appendingPathComponent(name)
        let flags =
            partialFile == nil ? (O_WRONLY | O_CREAT | O_EXCL) : (O_WRONLY | (truncating ? O_TRUNC | O_CREAT : 0))
        try self.init(url, flags: flags, offset: nil)
    }

    /// Opens the existing `file` to write from `offset` on: one segment of a split download.
    /// Each segment has a descriptor of its own, so its writes land at its own offset as
    /// `pwrite(2)` would put them, and ``bytesWritten`` is the offset its next byte goes to.
    /// - Throws: ``CourierError`` `.downloadFailed`.
    convenience init(segmentOf file: URL, at offset: Int64) throws {
        try self.init(file, flags: O_WRONLY, offset: offset)
    }

    /// Opens `url` with `flags` (created 0600 when they say so) at `offset`, or at its end when nil.
    private init(_ url: URL, flags: Int32, offset: Int64?) throws {
        let fd = open(url.path, flags | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.error("cannot open the download file", url: url) }
        let position = offset.map { lseek(fd, off_t($0), SEEK_SET) } ?? lseek(fd, 0, SEEK_END)
        guard position >= 0, offset.map({ off_t($0) == position }) ?? true else {
            close(fd)
            throw Self.error("cannot seek in the download file", url: url)
        }
        self.url = url
        self.descriptor = fd
        self.bytesWritten = Int64(position)
    }

    deinit { closeDescriptor() }

    /// Appends `buffer` in full.
    /// - Throws: ``CourierError`` `.downloadFailed` (disk full, I/O error).
    func write(_ buffer: ByteBuffer) throws {
        try buffer.withUnsafeReadableBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(descriptor, base + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw Self.error("cannot write the download file", url: url)
                }
                offset += written
            }
        }
        bytesWritten += Int64(buffer.readableBytes)
    }

    /// Closes the file; further writes are not allowed.
    func closeDescriptor() {
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
    }

    /// Closes and deletes the file.
    func discard() {
        closeDescriptor()
        unlink(url.path)
    }

    /// Moves the finished file to `destination`, atomically, never replacing an existing file
    /// unless `options` has `.removePreviousFile`, and then only a regular file.
    ///
    /// The temporary file is private (0600) while it fills; before it takes its name it gets the
    /// mode a new file gets (`0666 & ~umask`), or the replaced file's permission bits and, where
    /// the process may give them, its owner and group.
    /// - Throws: ``CourierError`` `.downloadDestinationExists` (an existing file without
    ///   `.removePreviousFile`; a symbolic link, device, FIFO or socket in any case) or
    ///   `.downloadFailed`; the temporary file is left for the caller to discard.
    func move(to destination: URL, options: DownloadOptions) throws {
        closeDescriptor()
        guard destination.isFileURL else { throw Self.notAFileURL(destination) }
        let parent = destination.deletingLastPathComponent()
        if options.contains(.createIntermediateDirectories) {
            do {
                try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            } catch {
                throw CourierError(
                    .downloadFailed, "cannot create the directory \(parent.path)", offendingInput: parent.path,
                    underlyingError: error)
            }
        }
        var source = url
        // rename(2) and link(2) work within one file system only; copy next to the destination first.
        if !Self.sameFileSystem(url, parent) {
            let staged = parent.appendingPathComponent(".\(destination.lastPathComponent).courier-\(UUID().uuidString)")
            do {
                try FileManager.default.copyItem(at: url, to: staged)
            } catch {
                throw CourierError(
                    .downloadFailed, "cannot copy the download into \(parent.path)", offendingInput: destination.path,
                    underlyingError: error)
            }
            source = staged
        }
        defer { if source != url { unlink(source.path) } }
        try Self.giveMode(to: source, replacing: destination, options: options)
        if options.contains(.removePreviousFile) {
            guard rename(source.path, destination.path) == 0 else {
                throw Self.error("cannot move the download to", url: destination)
            }
        } else {
            // link(2) fails with EEXIST instead of replacing, so no existing file is overwritten.
            if link(source.path, destination.path) != 0 {
                if errno == EEXIST { throw Self.exists(destination) }
                throw Self.error("cannot move the download to", url: destination)
            }
            unlink(source.path)
        }
        if source == url { return }
        unlink(url.path)
    }

    /// Refuses to replace what `.removePreviousFile` must not: a rename over a symbolic link
    /// replaces the link (its target keeps the old bytes), and over a device node or FIFO
    /// deletes it (as root, `/dev/null` itself), so anything but a regular file is an error.
    /// - Throws: ``CourierError`` `.downloadDestinationExists`.
    static func checkReplaceable(_ destination: URL) throws {
        var info = stat()
        guard lstat(destination.path, &info) == 0 else { return }
        let kind: String
        switch info.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFLNK: kind = "a symbolic link"
        case S_IFDIR: kind = "a directory"
        case S_IFCHR, S_IFBLK: kind = "a device"
        case S_IFIFO: kind = "a FIFO"
        default: kind = "not a regular file"
        }
        throw CourierError(
            .downloadDestinationExists,
            "\(destination.path) is \(kind); .removePreviousFile replaces only a regular file, so it was left as it was",
            offendingInput: destination.path)
    }

    /// Gives `file` the mode of a new file, or of the regular file it replaces (with its owner
    /// and group when the process may set them; set-id bits are not carried over).
    /// - Throws: ``CourierError`` `.downloadDestinationExists` from ``checkReplaceable(_:)``.
    private static func giveMode(to file: URL, replacing destination: URL, options: DownloadOptions) throws {
        var info = stat()
        guard options.contains(.removePreviousFile), lstat(destination.path, &info) == 0 else {
            chmod(file.path, NewFileMode.bits)
            return
        }
        try checkReplaceable(destination)
        // Before chmod: chown clears set-id bits, and a failure (not root) is no reason to stop.
        if info.st_uid != geteuid() || info.st_gid != getegid() { _ = chown(file.path, info.st_uid, info.st_gid) }
        chmod(file.path, info.st_mode & 0o777)
    }

    private static func sameFileSystem(_ file: URL, _ directory: URL) -> Bool {
        var a = stat()
        var b = stat()
        guard stat(file.path, &a) == 0, stat(directory.path, &b) == 0 else { return true }
        return a.st_dev == b.st_dev
    }

    static func notAFileURL(_ destination: URL) -> CourierError {
        CourierError(
            .downloadFailed, "the download destination \(destination.absoluteString) is not a file URL",
            offendingInput: destination.absoluteString)
    }

    static func exists(_ destination: URL) -> CourierError {
        CourierError(
            .downloadDestinationExists, "\(destination.path) already exists; pass .removePreviousFile to replace it",
            offendingInput: destination.path)
    }

    private static func error(_ what: String, url: URL) -> CourierError {
        let code = errno
        return CourierError(
            .downloadFailed, "\(what) \(url.path): \(String(cString: strerror(code)))", offendingInput: url.path,
            underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
    }
}

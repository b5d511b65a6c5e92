import Foundation
import NIOCore

/// A file open for synchronous reads, closed when the reader goes away.
///
/// Only for ``MultipartBodyReader``, whose `read(into:)` is synchronous by contract (the
/// AFMultipartBodyStream shape: the caller asked to block). Every asynchronous read of a file
/// goes through ``FileChunks``, on swift-nio's file system thread pool.
final class FileReader {
    let path: String
    private let descriptor: Int32

    /// - Throws: ``CourierError`` `.invalidFile` when the file cannot be opened.
    init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw CourierError(
                .invalidFile, "cannot open \(path): \(String(cString: strerror(code)))", offendingInput: path,
                underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
        }
        self.descriptor = fd
    }

    deinit { close(descriptor) }

    /// Reads up to `pointer.count` bytes at `offset` straight into caller memory; 0 at end of file.
    /// - Throws: ``CourierError`` `.invalidFile` on a read error.
    func read(into pointer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        try Self.read(descriptor, into: pointer, at: offset, path: path)
    }

    /// Fails when the file has grown beyond `offset`, which would mean the declared length is stale.
    /// - Throws: ``CourierError`` `.bodyLengthMismatch`.
    func checkAtEnd(offset: Int64) throws {
        var info = stat()
        if fstat(descriptor, &info) == 0 { try Self.checkSize(Int64(info.st_size), atEnd: offset, path: path) }
    }

    /// One `pread` of `descriptor`, retried when a signal interrupts it; 0 at end of file.
    /// - Throws: ``CourierError`` `.invalidFile` on a read error.
    static func read(
        _ descriptor: Int32, into pointer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String
    ) throws -> Int {
        while true {
            let result = pread(descriptor, pointer.baseAddress, pointer.count, off_t(offset))
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw CourierError(
                .invalidFile, "cannot read \(path): \(String(cString: strerror(code)))", offendingInput: path,
                underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
        }
    }

    /// Fails when a file of `size` bytes holds more than the `end` its body declared.
    /// - Throws: ``CourierError`` `.bodyLengthMismatch`.
    static func checkSize(_ size: Int64, atEnd end: Int64, path: String) throws {
        guard size > end else { return }
        throw CourierError(
            .bodyLengthMismatch, "\(path) grew after it was added: it now has \(size) bytes", offendingInput: path)
    }
}

/// Facts about a file, read once when it is added to a body.
struct FileInfo: Sendable {
    let path: String
    let size: Int64

    /// - Throws: ``CourierError`` `.invalidFile` for a URL that is not a file URL, a missing file,
    ///   a directory or other non-regular file, or one that cannot be read.
    init(url: URL) throws {
        guard url.isFileURL else {
            throw CourierError(
                .invalidFile, "\(url.absoluteString) is not a file URL", offendingInput: url.absoluteString)
        }
        let path = url.path
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            throw CourierError(
                .invalidFile, "cannot read \(path): \(String(cString: strerror(code)))", offendingInput: path,
                underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            let kind = (info.st_mode & S_IFMT) == S_IFDIR ? "a directory" : "not a regular file"
            throw CourierError(.invalidFile, "\(path) is \(kind)", offendingInput: path)
        }
        guard access(path, R_OK) == 0 else {
            throw CourierError(.invalidFile, "\(path) is not readable", offendingInput: path)
        }
        self.path = path
        self.size = Int64(info.st_size)
    }
}

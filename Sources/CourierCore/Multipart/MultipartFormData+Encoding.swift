import Foundation
import NIOCore

extension MultipartFormData {
    /// The whole body in memory, for small forms. One allocation of exactly ``contentLength``
    /// bytes; files and streams are read into it.
    /// - Throws: as ``makeReader()`` and ``MultipartBodyReader/read(into:)-(UnsafeMutableRawBufferPointer)``.
    public func encode() throws -> Data {
        let reader = try makeReader()
        let length = Int(contentLength ?? 0)
        guard length > 0 else { return Data() }
        var data = Data(count: length)
        let filled = try data.withUnsafeMutableBytes { (pointer: UnsafeMutableRawBufferPointer) -> Int in
            var filled = 0
            while filled < length {
                let read = try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: pointer[filled...]))
                if read == 0 { break }
                filled += read
            }
            return filled
        }
        // Pieces declare their lengths, so the reader can never deliver a different count; kept as a guard.
        guard filled == length, try reader.read(into: UnsafeMutableRawBufferPointer(start: nil, count: 0)) == 0,
            reader.isAtEnd
        else {
            throw CourierError(
                .bodyLengthMismatch, "the multipart body held \(filled) bytes, not the \(length) declared")
        }
        return data
    }

    /// Writes the whole body to a new file at `fileURL`, in 1 MiB pieces (AFNetworking's
    /// `requestWithMultipartFormRequest:writingStreamContentsToFile:`, for servers that need a
    /// plain file body). A file left half-written by a failure is removed.
    /// - Throws: ``CourierError`` `.invalidFile` when `fileURL` is not a file URL;
    ///   `.outputFileExists` when something already exists there; `.fileWriteFailed` when the
    ///   file cannot be created or written; anything ``makeReader()`` or a read throws.
    public func write(to fileURL: URL) throws {
        guard fileURL.isFileURL else {
            throw CourierError(
                .invalidFile, "\(fileURL.absoluteString) is not a file URL", offendingInput: fileURL.absoluteString)
        }
        let reader = try makeReader()
        let path = fileURL.path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            if code == EEXIST {
                throw CourierError(
                    .outputFileExists, "\(path) already exists; the form is not written over it",
                    offendingInput: path)
            }
            throw CourierError(
                .fileWriteFailed, "cannot create \(path): \(String(cString: strerror(code)))", offendingInput: path,
                underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
        }
        do {
            let chunkSize = 1 << 20
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
            defer { buffer.deallocate() }
            while true {
                let read = try reader.read(into: buffer)
                if read == 0 { break }
                try writeAll(UnsafeRawBufferPointer(rebasing: buffer[0..<read]), to: descriptor, path: path)
            }
        } catch {
            close(descriptor)
            unlink(path)
            throw error
        }
        // Some file systems report a failed write only when the file is closed.
        if close(descriptor) != 0 {
            let code = errno
            unlink(path)
            throw CourierError(
                .fileWriteFailed, "cannot finish writing \(path): \(String(cString: strerror(code)))",
                offendingInput: path, underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
        }
    }
}

/// Writes all of `bytes`, retrying short writes and interruptions.
private func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, path: String) throws {
    var offset = 0
    while offset < bytes.count {
        let written = write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
        if written < 0 {
            let code = errno
            if code == EINTR { continue }
            throw CourierError(
                .fileWriteFailed, "cannot write \(path): \(String(cString: strerror(code)))", offendingInput: path,
                underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
        }
        offset += written
    }
}

import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where `--download` puts the body, and how `--continue` resumes into it.
///
/// With `--output` the named path is written as curl and the shell's `>` write it: a new file
/// is created with `0666 & ~umask`; whatever exists is written through, never unlinked or
/// renamed over, so a regular file keeps its inode, mode, owner and other hard links, a
/// symbolic link keeps pointing where it did and its target receives the bytes, and a device
/// node or FIFO stays one (``DownloadWriter``). A resumed download (a 206 answer) is appended
/// to the file. Without `--output` a safe name is chosen from the response and never
/// overwrites an existing file.
///
/// `--split` writes each segment at its offset, which only a regular file takes: it writes to
/// ``regularFile``, the same file with its links followed; anything else at `--output` is
/// written through over one connection, as here.
struct DownloadTarget: Sendable {
    /// The `--output` path, if given.
    var outputPath: String?
    /// The file `--output` writes to once its symbolic links are followed, when that is a
    /// regular file or nothing yet (a dangling link names the file to create); nil without
    /// `--output`, or when it is a device, FIFO or socket, which take their bytes in order only.
    /// The resume record sits beside it, with the bytes it describes.
    var regularFile: String?
    /// The bytes already on disk when resuming, nil otherwise.
    var resumeOffset: Int64?
    /// The `If-Range` value kept beside the file by the run that was interrupted (the library's
    /// resume record, `.<output>.courier-resume`), so that a changed resource is fetched whole
    /// (200) instead of being spliced onto old bytes; nil sends a bare `Range`, as httpie and
    /// `curl -C -` do.
    var ifRange: String?

    /// Checks the options against the file system. `url` is the request's: a resume record
    /// written for another scheme, host, port or path gives no `If-Range` (the record keeps no
    /// query, so only those are compared).
    /// - Throws: ``CLIError`` (usage) when `--output` names a directory.
    static func prepare(outputPath: String?, resume: Bool, url: URL) throws -> DownloadTarget {
        guard let outputPath else {
            return DownloadTarget(outputPath: nil, regularFile: nil, resumeOffset: nil, ifRange: nil)
        }
        // stat, not lstat: a link is judged by what it points to, as the write will be.
        var info = stat()
        let exists = stat(outputPath, &info) == 0
        let missing = !exists && errno == ENOENT
        let kind = info.st_mode & S_IFMT
        if exists, kind == S_IFDIR { throw CLIError.usage("--output \"\(outputPath)\" is a directory") }
        var offset: Int64?
        if resume, exists {
            if kind == S_IFREG {
                offset = Int64(info.st_size)
            } else {
                // Bytes written to a device or FIFO are not there to be continued.
                StandardStreams.writeError(
                    "courier: warning: --continue: \"\(outputPath)\" is not a regular file; downloading it whole\n")
            }
        }
        let regularFile =
            exists
            ? (kind == S_IFREG ? followingLinks(outputPath, to: info) : nil)
            : (missing ? followingLinks(outputPath, to: nil) : nil)
        let kept = offset.flatMap {
            $0 > 0 ? ResumeData(partialFile: URL(fileURLWithPath: regularFile ?? outputPath)) : nil
        }
        let validator = kept.flatMap { $0.continues(url) ? $0.ifRangeValidator : nil }
        return DownloadTarget(
            outputPath: outputPath, regularFile: regularFile, resumeOffset: offset, ifRange: validator)
    }

    /// `path` with the symbolic links of its last component followed, as `open(2)` follows them:
    /// the file found, which must be `found` (a `/proc/self/fd` link names a deleted file or a
    /// pipe by a text that is no path), or the missing one a dangling link names when `found` is
    /// nil; nil for a loop or a link that cannot be read.
    private static func followingLinks(_ path: String, to found: stat?) -> String? {
        var current = path
        // Linux's own limit on the links one lookup follows.
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0 else {
                return errno == ENOENT && found == nil ? current : nil
            }
            guard info.st_mode & S_IFMT == S_IFLNK else {
                guard let found, found.st_dev == info.st_dev, found.st_ino == info.st_ino else { return nil }
                return current
            }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count > 0 else { return nil }
            guard let target = String(validating: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            else { return nil }
            if !target.hasPrefix("/"), let slash = current.lastIndex(of: "/") {
                current = String(current[...slash]) + target
            } else {
                current = target
            }
        }
        return nil
    }

    /// The directory the file goes to: that of `--output`, else the current one.
    var directory: URL {
        guard let outputPath else { return URL(fileURLWithPath: FileManager.default.currentDirectoryPath) }
        return URL(fileURLWithPath: outputPath).deletingLastPathComponent()
    }

    /// The name to show for the target.
    var displayName: String { outputPath ?? "download" }

    /// Writes the downloaded `file` (a scratch file, removed with its directory) to the target:
    /// appended when it continues it (a 206 whose bytes are exactly those its `Content-Range`
    /// names, up to the end of the file), else the whole of it; returns the path written.
    /// - Throws: ``CLIError`` when the file cannot be written or a 206 does not continue it.
    func store(_ file: URL, head: ResponseHead, url: URL) throws -> String {
        try save(file, head: head, url: url, complete: true)
    }

    private func save(_ file: URL, head: ResponseHead, url: URL, complete: Bool) throws -> String {
        do {
            guard let outputPath else {
                let manager = FileManager.default
                let directory = URL(fileURLWithPath: manager.currentDirectoryPath)
                let name = DownloadFileName.unique(
                    DownloadFileName.suggested(
                        contentDisposition: head.value(forHTTPHeaderField: "Content-Disposition"), url: url,
                        contentType: head.value(forHTTPHeaderField: "Content-Type")),
                    in: directory)
                // The scratch file is private (0600); the saved one is an ordinary new file.
                chmod(file.path, NewFileMode.bits)
                // moveItem fails rather than replace a file that appeared meanwhile.
                try manager.moveItem(at: file, to: directory.appendingPathComponent(name))
                return name
            }
            if head.statusCode == 206, let resumeOffset, resumeOffset > 0 {
                var info = stat()
                let received = stat(file.path, &info) == 0 ? Int64(info.st_size) : 0
                // Checked before anything is written: a refused 206 leaves the file and its
                // resume record as they were, for another --continue.
                try Self.checkContentRange(head, offset: resumeOffset, received: received, complete: complete)
                ResumeData.removeValidators(besidePartialFile: URL(fileURLWithPath: regularFile ?? outputPath))
                do {
                    try DownloadWriter.append(file, to: outputPath)
                } catch {
                    // A write that failed part way (a full disk) would leave a spliced file.
                    truncate(outputPath, off_t(resumeOffset))
                    throw error
                }
                return outputPath
            }
            // Removes Courier's record only, never a file of the user's at that name.
            ResumeData.removeValidators(besidePartialFile: URL(fileURLWithPath: regularFile ?? outputPath))
            try DownloadWriter.write(file, to: outputPath)
            return outputPath
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError.failure("cannot save the download: \(error.localizedDescription)")
        }
    }

    /// A 416 to `--continue` means the file is complete only when the server gives its length
    /// (`Content-Range: bytes */N`) and that is the partial file's; anything else is an error
    /// that keeps the file.
    /// - Throws: ``CLIError`` when the 416 does not say the file is complete.
    func checkUnsatisfiedRange(_ head: ResponseHead) throws {
        guard let resumeOffset else { return }
        let range = head.value(forHTTPHeaderField: "Content-Range").flatMap(ContentRange.init)
        if case .unsatisfied(let length)? = range, length == resumeOffset { return }
        let said: String
        if case .unsatisfied(let length)? = range {
            said = "the server says the file has \(length) bytes"
        } else {
            said = "without the file's length"
        }
        throw CLIError.failure(
            "the server refused the range from byte \(resumeOffset) of \"\(displayName)\" (416, \(said)); the partial file was kept"
        )
    }

    /// Stores the bytes of an interrupted download as ``store(_:head:url:)`` does, with the
    /// response's validators beside them for the `--continue` that resumes it, when they went to
    /// a regular file (bytes written to a device or FIFO cannot be continued).
    /// - Throws: ``CLIError`` when the file cannot be written.
    func keep(_ file: URL, head: ResponseHead, url: URL) throws -> String {
        let saved = try save(file, head: head, url: url, complete: false)
        var info = stat()
        if stat(saved, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
            try? ResumeData.storeValidators(
                of: head, from: url, besidePartialFile: URL(fileURLWithPath: regularFile ?? saved))
        }
        return saved
    }

    /// A 206 must continue exactly where the file ends, with the bytes its `Content-Range`
    /// names: all of them, ending the file when its length is known, once the body is
    /// `complete`; no more than them when it was cut.
    private static func checkContentRange(_ head: ResponseHead, offset: Int64, received: Int64, complete: Bool)
        throws
    {
        guard let value = head.value(forHTTPHeaderField: "Content-Range"), let range = ContentRange(value),
            case .satisfied(let first, let last, let length) = range
        else {
            throw CLIError.failure("the server answered 206 without a usable Content-Range; the partial file was kept")
        }
        guard first == offset else {
            throw CLIError.failure("the server resumed at byte \(first), not \(offset); the partial file was kept")
        }
        guard received == range.byteCount || (!complete && received < range.byteCount) else {
            throw CLIError.failure(
                "the server sent \(received) bytes for bytes \(first)-\(last); the partial file was kept")
        }
        if complete, let length, last + 1 != length {
            throw CLIError.failure(
                "the server sent bytes \(first)-\(last) of \(length), not the rest of the file; the partial file was kept"
            )
        }
    }
}

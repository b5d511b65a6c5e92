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
struct DownloadTarget: Sendable {
    /// The `--output` path, if given.
    var outputPath: String?
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
        guard let outputPath else { return DownloadTarget(outputPath: nil, resumeOffset: nil, ifRange: nil) }
        // stat, not lstat: a link is judged by what it points to, as the write will be.
        var info = stat()
        let exists = stat(outputPath, &info) == 0
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
        let kept = offset.flatMap { $0 > 0 ? ResumeData(partialFile: URL(fileURLWithPath: outputPath)) : nil }
        let validator = kept.flatMap { $0.continues(url) ? $0.ifRangeValidator : nil }
        return DownloadTarget(outputPath: outputPath, resumeOffset: offset, ifRange: validator)
    }

    /// The directory the file goes to: that of `--output`, else the current one.
    var directory: URL {
        guard let outputPath else { return URL(fileURLWithPath: FileManager.default.currentDirectoryPath) }
        return URL(fileURLWithPath: outputPath).deletingLastPathComponent()
    }

    /// The name to show for the target.
    var displayName: String { outputPath ?? "download" }

    /// Writes the downloaded `file` (a scratch file, removed with its directory) to the target:
    /// appended when it continues it (a 206), else the whole of it; returns the path written.
    /// - Throws: ``CLIError`` when the file cannot be written.
    func store(_ file: URL, head: ResponseHead, url: URL) throws -> String {
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
            // Removes Courier's record only, never a file of the user's at that name.
            ResumeData.removeValidators(besidePartialFile: URL(fileURLWithPath: outputPath))
            if head.statusCode == 206, let resumeOffset, resumeOffset > 0 {
                try Self.checkContentRange(head, offset: resumeOffset)
                try DownloadWriter.append(file, to: outputPath)
                return outputPath
            }
            try DownloadWriter.write(file, to: outputPath)
            return outputPath
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError.failure("cannot save the download: \(error.localizedDescription)")
        }
    }

    /// Stores the bytes of an interrupted download as ``store(_:head:url:)`` does, with the
    /// response's validators beside them for the `--continue` that resumes it, when they went to
    /// a regular file (bytes written to a device or FIFO cannot be continued).
    /// - Throws: ``CLIError`` when the file cannot be written.
    func keep(_ file: URL, head: ResponseHead, url: URL) throws -> String {
        let saved = try store(file, head: head, url: url)
        var info = stat()
        if stat(saved, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
            try? ResumeData.storeValidators(of: head, from: url, besidePartialFile: URL(fileURLWithPath: saved))
        }
        return saved
    }

    /// A 206 must continue exactly where the file ends.
    private static func checkContentRange(_ head: ResponseHead, offset: Int64) throws {
        guard let value = head.value(forHTTPHeaderField: "Content-Range"), let range = ContentRange(value),
            case .satisfied(let first, _, _) = range
        else {
            throw CLIError.failure("the server answered 206 without a usable Content-Range; the partial file was kept")
        }
        guard first == offset else {
            throw CLIError.failure("the server resumed at byte \(first), not \(offset); the partial file was kept")
        }
    }
}

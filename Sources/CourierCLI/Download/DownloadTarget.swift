import Courier
import Foundation

/// Where `--download` puts the body, and how `--continue` resumes into it.
///
/// With `--output` the named file is written (replaced, or appended to when resuming with a
/// 206 answer); without it a safe name is chosen from the response and never overwrites an
/// existing file.
struct DownloadTarget: Sendable {
    /// The `--output` path, if given.
    var outputPath: String?
    /// The bytes already on disk when resuming, nil otherwise.
    var resumeOffset: Int64?
    /// The `If-Range` value kept beside the file by the run that was interrupted (the library's
    /// sidecar, `<output>.courier`), so that a changed resource is fetched whole (200) instead
    /// of being spliced onto old bytes; nil sends a bare `Range`, as httpie and `curl -C -` do.
    var ifRange: String?

    /// Checks the options against the file system.
    /// - Throws: ``CLIError`` (usage) when `--output` names a directory.
    static func prepare(outputPath: String?, resume: Bool) throws -> DownloadTarget {
        guard let outputPath else { return DownloadTarget(outputPath: nil, resumeOffset: nil, ifRange: nil) }
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: outputPath, isDirectory: &isDirectory)
        if exists, isDirectory.boolValue { throw CLIError.usage("--output \"\(outputPath)\" is a directory") }
        var offset: Int64?
        if resume, exists {
            offset = (try? FileManager.default.attributesOfItem(atPath: outputPath)[.size] as? Int64) ?? 0
        }
        let kept = offset.flatMap { $0 > 0 ? ResumeData(partialFile: URL(fileURLWithPath: outputPath)) : nil }
        return DownloadTarget(outputPath: outputPath, resumeOffset: offset, ifRange: kept?.ifRangeValidator)
    }

    /// The directory the file goes to: that of `--output`, else the current one.
    var directory: URL {
        guard let outputPath else { return URL(fileURLWithPath: FileManager.default.currentDirectoryPath) }
        return URL(fileURLWithPath: outputPath).deletingLastPathComponent()
    }

    /// The name to show for the target.
    var displayName: String { outputPath ?? "download" }

    /// Moves or appends the downloaded `file` into place; returns the path written.
    /// - Throws: ``CLIError`` when the file cannot be written.
    func store(_ file: URL, head: ResponseHead, url: URL) throws -> String {
        let manager = FileManager.default
        do {
            guard let outputPath else {
                let directory = URL(fileURLWithPath: manager.currentDirectoryPath)
                let name = DownloadFileName.unique(
                    DownloadFileName.suggested(
                        contentDisposition: head.value(forHTTPHeaderField: "Content-Disposition"), url: url,
                        contentType: head.value(forHTTPHeaderField: "Content-Type")),
                    in: directory)
                // moveItem fails rather than replace a file that appeared meanwhile.
                let destination = directory.appendingPathComponent(name)
                try manager.moveItem(at: file, to: destination)
                Self.makeReadable(destination.path)
                return name
            }
            ResumeData.removeValidators(besidePartialFile: URL(fileURLWithPath: outputPath))
            if head.statusCode == 206, let resumeOffset, resumeOffset > 0 {
                try Self.checkContentRange(head, offset: resumeOffset)
                try Self.append(file, to: outputPath)
                return outputPath
            }
            if manager.fileExists(atPath: outputPath) { try manager.removeItem(atPath: outputPath) }
            try manager.moveItem(at: file, to: URL(fileURLWithPath: outputPath))
            Self.makeReadable(outputPath)
            return outputPath
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError.failure("cannot save the download: \(error.localizedDescription)")
        }
    }

    /// Stores the bytes of an interrupted download as ``store(_:head:url:)`` does, with the
    /// response's validators beside them for the `--continue` that resumes it.
    /// - Throws: ``CLIError`` when the file cannot be written.
    func keep(_ file: URL, head: ResponseHead, url: URL) throws -> String {
        let saved = try store(file, head: head, url: url)
        try? ResumeData.storeValidators(of: head, from: url, besidePartialFile: URL(fileURLWithPath: saved))
        return saved
    }

    /// The session's temporary files are private (0600); a saved download gets the usual 0644.
    private static func makeReadable(_ path: String) {
        try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
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

    private static func append(_ file: URL, to path: String) throws {
        let reader = try FileHandle(forReadingFrom: file)
        defer { try? reader.close() }
        guard let writer = FileHandle(forWritingAtPath: path) else {
            throw CLIError.failure("cannot open \(path) to append to it")
        }
        defer { try? writer.close() }
        try writer.seekToEnd()
        while let chunk = try reader.read(upToCount: 1 << 20), !chunk.isEmpty {
            try writer.write(contentsOf: chunk)
        }
    }
}

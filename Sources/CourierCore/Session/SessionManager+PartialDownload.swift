import Foundation

/// Downloads to a destination named up front, which can stream into a partial file beside it
/// and continue from what an earlier process left there (``DownloadOptions/resumesPartialFile``).
extension SessionManager {
    /// A task that downloads `request` to `destination`.
    ///
    /// Without ``DownloadOptions/resumesPartialFile`` the body streams into a hidden file
    /// (`.courier-UUID.download`) in the destination's directory, renamed into place at the end
    /// and removed on failure, so the bytes are written once whatever file system the destination
    /// is on; with it, into `partialFile` (`destination.part` by default), kept and continued as
    /// that option says. The finished file gets the mode a new file gets (`0666 & ~umask`), or a
    /// replaced file's (see ``DownloadOptions/removePreviousFile``).
    /// - Throws: ``CourierError``, checked before any I/O so that nothing is fetched only to be
    ///   refused at the end: `.downloadDestinationExists` when `destination` exists and `options`
    ///   lacks `.removePreviousFile`, or is not a regular file; `.downloadFailed` for a destination
    ///   that is not a file URL, or whose directory does not exist and `options` lacks
    ///   `.createIntermediateDirectories`.
    public func downloadTask(
        with request: Request, to destination: URL, partialFile: URL? = nil, options: DownloadOptions = [],
        progress: ProgressHandler? = nil
    ) throws -> SessionTask {
        let existingDirectory = try Self.checkDestination(destination, options: options)
        let partial = PartialDownload(destination: destination, partialFile: partialFile)
        var download = SessionTask.DownloadParameters(
            options: options, destination: partial.destinationClosure, resumeData: nil)
        if options.contains(.resumesPartialFile) {
            // A split download's partial file has holes; one connection starts it over.
            download.resumeData = partial.leftOver().flatMap { $0.missingRanges == nil ? $0 : nil }
            download.partial = partial
        } else {
            download.stagingDirectory = existingDirectory
        }
        return makeTask(
            kind: .download, request: request, uploadProgress: nil, downloadProgress: progress, download: download
        ).task
    }

    /// The checks made before any I/O: the destination is a file URL, not an existing file
    /// unless `options` replaces it (and then a regular one), in a directory that exists or that
    /// `options` creates. Returns that directory when it exists.
    /// - Throws: as ``downloadTask(with:to:partialFile:options:progress:)``.
    static func checkDestination(_ destination: URL, options: DownloadOptions) throws -> URL? {
        guard destination.isFileURL else { throw DownloadFile.notAFileURL(destination) }
        if !options.contains(.removePreviousFile), FileManager.default.fileExists(atPath: destination.path) {
            throw DownloadFile.exists(destination)
        }
        if options.contains(.removePreviousFile) { try DownloadFile.checkReplaceable(destination) }
        let directory = destination.deletingLastPathComponent()
        let existingDirectory = existingDirectory(directory)
        if !options.contains(.createIntermediateDirectories), existingDirectory == nil {
            throw CourierError(
                .downloadFailed,
                "the directory \(directory.path) of the download destination does not exist; pass .createIntermediateDirectories to make it",
                offendingInput: destination.path)
        }
        return existingDirectory
    }

    /// `directory` when it is one (a destination whose directory is made at the end, with
    /// `.createIntermediateDirectories`, stages in the temporary directory instead).
    private static func existingDirectory(_ directory: URL) -> URL? {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory)
            && isDirectory.boolValue ? directory : nil
    }

    /// Downloads `request` to `destination`; see ``downloadTask(with:to:partialFile:options:progress:)``.
    /// - Throws: as ``download(_:options:progress:destination:)``; with
    ///   ``DownloadOptions/resumesPartialFile``, a failed download keeps its partial file (when
    ///   the response had a validator) for the next call to continue.
    public func download(
        _ request: Request, to destination: URL, partialFile: URL? = nil, options: DownloadOptions = [],
        progress: ProgressHandler? = nil
    ) async throws -> SessionResponse {
        let task = try downloadTask(
            with: request, to: destination, partialFile: partialFile, options: options, progress: progress)
        return try await task.response()
    }
}

extension SessionTask.DownloadParameters {
    /// How a response continues the resume data, for ``SessionTask/receiveFile``: as
    /// ``ResumeData/continuation(for:)`` says, except that a resumable partial file is never
    /// overwritten by an error page (a status outside 2xx other than 416 fails and keeps it),
    /// and one that a 206 or 416 shows is not a prefix of the representation is removed, so
    /// the next attempt starts over instead of failing the same way.
    /// - Throws: ``CourierError`` `.invalidResumeData` or `.downloadFailed`.
    func continuation(for head: ResponseHead, resuming resumeData: ResumeData) throws -> ResumeData.Continuation {
        guard let partial else { return try resumeData.continuation(for: head) }
        if !(200...299).contains(head.statusCode) && head.statusCode != 416 {
            throw CourierError(
                .downloadFailed,
                "\(head.url.absoluteString) answered \(head.statusCode); the partial download \(partial.partialFile.path) was kept",
                offendingInput: head.url.absoluteString, response: head)
        }
        do {
            return try resumeData.continuation(for: head)
        } catch var error as CourierError {
            unlink(partial.partialFile.path)
            partial.removeSidecar()
            error.message +=
                "; the partial download \(partial.partialFile.path) was removed, the next attempt starts over"
            throw error
        }
    }

    /// Opens the file for a response's body: the partial file when resumable, else a new
    /// temporary file. A partial file whose body is not `resumable` (decoded from a content
    /// coding) gets no sidecar, so no later process continues it.
    /// - Throws: ``CourierError`` `.downloadFailed`.
    func openFile(
        for head: ResponseHead, url: URL, continuation: ResumeData.Continuation, resumable: Bool,
        temporaryDirectory: URL
    ) throws -> DownloadFile {
        guard let partial else {
            if let resumeData {
                return try DownloadFile(
                    directory: temporaryDirectory, appendingTo: resumeData.partialFileURL,
                    truncating: continuation == .restart)
            }
            return try DownloadFile(directory: stagingDirectory ?? temporaryDirectory, hidden: stagingDirectory != nil)
        }
        let file = try partial.open(
            appending: resumeData != nil && continuation != .restart, temporaryDirectory: temporaryDirectory)
        if continuation == .restart {
            if resumable { try partial.recordValidators(of: head, url: url) } else { partial.removeSidecar() }
        }
        return file
    }

    /// After a failure: whether `file` is kept for a later resume (the caller then records the
    /// resume data) or discarded.
    func keepsPartialFile(_ file: DownloadFile) -> Bool {
        guard let partial else { return false }
        if partial.isResumable(file) { return true }
        partial.removeSidecar()
        return false
    }
}

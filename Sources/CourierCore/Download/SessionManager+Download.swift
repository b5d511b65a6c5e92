import Foundation

/// Downloads: to where a closure says once the response is known, continuing a cancelled
/// download's ``ResumeData``; or to a destination named up front, which can stream into a partial
/// file beside it and continue from what an earlier process left there
/// (``DownloadOptions/resumesPartialFile``).
extension SessionManager {
    /// A task that streams the response body to a temporary file in constant memory, then moves
    /// it to where `destination` says, atomically; an existing file is replaced only with
    /// `.removePreviousFile`, and only a regular one (see ``DownloadOptions/removePreviousFile``).
    /// A new file gets `0666 & ~umask`, as `open(2)` would give it. A cancelled or failed
    /// download leaves no file at the destination. With `resumeData` (from
    /// ``SessionTask/cancel(producingResumeData:)``) it continues those bytes when `request` is
    /// for the same resource (``ResumeData/continues(_:)``; `Request(url: resumeData.url)` is).
    public func downloadTask(
        with request: Request, resumingFrom resumeData: ResumeData? = nil, options: DownloadOptions = [],
        progress: ProgressHandler? = nil, destination: @escaping DownloadDestination
    ) -> SessionTask {
        makeTask(
            kind: .download, request: request, uploadProgress: nil, downloadProgress: progress,
            download: .init(options: options, destination: destination, resumeData: resumeData)
        ).task
    }

    /// Downloads `request` as ``downloadTask(with:resumingFrom:options:progress:destination:)``
    /// does; the response's ``SessionResponse/fileURL`` says where the file is.
    /// - Throws: ``CourierError`` from the exchange, `.downloadDestinationExists`, `.downloadFailed`,
    ///   and `.invalidResumeData` when `resumeData` has no validator or the server's answer does not fit it.
    public func download(
        _ request: Request, resumingFrom resumeData: ResumeData? = nil, options: DownloadOptions = [],
        progress: ProgressHandler? = nil, destination: @escaping DownloadDestination
    ) async throws -> SessionResponse {
        try await downloadTask(
            with: request, resumingFrom: resumeData, options: options, progress: progress, destination: destination
        ).response()
    }

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
        var download = SessionTask.DownloadParameters(
            options: options, destination: { _, _ in destination }, resumeData: nil)
        if options.contains(.resumesPartialFile) {
            let partialFile = SessionTask.DownloadParameters.partialFile(partialFile, for: destination)
            // A split download's partial file has holes; one connection starts it over.
            download.resumeData = ResumeData(partialFile: partialFile).flatMap { $0.missingRanges == nil ? $0 : nil }
            download.partialFile = partialFile
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
    /// - Throws: as ``download(_:resumingFrom:options:progress:destination:)``; with
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

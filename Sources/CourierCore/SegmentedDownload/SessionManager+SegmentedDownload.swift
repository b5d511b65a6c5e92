import Foundation

/// Downloads over several ranged connections at once, for servers and CDNs that cap each
/// connection's rate (the transfer managers of the S3 SDKs and `aria2c -x/-s` do the same).
extension SessionManager {
    /// Downloads `request` to `destination` over up to `connections` ranged requests at once
    /// (never more than the transport's ``TransportCapabilities/maximumConnectionsPerHost``),
    /// each writing its bytes at their offset in one file, with one progress for the whole file.
    ///
    /// The first request asks for `Range: bytes=0-`. When the answer is a `206` with the
    /// complete length and a strong validator (an `ETag` that is not weak, or `Last-Modified`),
    /// the rest of the file is split among the other connections while the first goes on; a
    /// connection that finishes takes the back half of the segment with the most left. Every
    /// other segment sends `If-Range` with that validator and must come back as a `206` of the
    /// same length and validators: a `200`, another length or another validator (the file
    /// changed on the server) fails the download with `.downloadFailed` and never leaves a file
    /// spliced from two versions. A server that ignores ranges, sends no length or no validator,
    /// or answers in a content coding, is downloaded whole from that first answer over its one
    /// connection.
    ///
    /// Over HTTP/2 the requests are streams of one connection, so a cap on the server's
    /// connection rate caps them all together; splitting then gains nothing, but costs nothing
    /// either beyond a few requests.
    ///
    /// With ``DownloadOptions/resumesPartialFile`` the bytes go to `partialFile`
    /// (`destination.part` by default; `destination` itself fills the file in place), with a
    /// private record beside it (`.NAME.courier-resume`, 0600) that holds the validators, the
    /// length and the ranges still missing; it is refreshed every second and when the download
    /// fails or is cancelled, and a later call continues every missing range (the record then
    /// surfaces as ``ResumeData`` with ``ResumeData/missingRanges``, through
    /// ``ResumeData/init(partialFile:)``). Without it the bytes go to a hidden temporary file in
    /// the destination's directory, removed when the download fails.
    /// - Parameters:
    ///   - request: the GET to fetch; every segment is this request with a `Range` and `If-Range`.
    ///   - destination: where the finished file goes.
    ///   - connections: how many ranged requests run at once; 1 or less downloads over one.
    ///   - partialFile: where the bytes go while they arrive, with `.resumesPartialFile`.
    ///   - options: the destination and resumption options, as for a download over one connection.
    ///   - progress: called with the bytes every segment has together against the file's length.
    /// - Returns: the response of the first request (a `206` when split), with
    ///   ``SessionResponse/fileURL`` the destination.
    /// - Throws: ``CourierError``: as ``download(_:to:partialFile:options:progress:)`` for the
    ///   destination; the first failure of any segment after its retries (a lost connection is
    ///   retried from where the segment got to); `.downloadFailed` for a status outside 2xx or a
    ///   changed file (its partial file and record are then removed, so the next attempt starts
    ///   over); `.cancelled`.
    public func download(
        _ request: Request, to destination: URL, connections: Int, partialFile: URL? = nil,
        options: DownloadOptions = [], progress: ProgressHandler? = nil
    ) async throws -> SessionResponse {
        let resumable = options.contains(.resumesPartialFile)
        let partialFile = SessionTask.DownloadParameters.partialFile(partialFile, for: destination)
        let leftOver = resumable ? Self.splitLeftOver(partialFile, for: request.url) : nil
        let inPlace = resumable && partialFile.standardizedFileURL == destination.standardizedFileURL
        let staging = try Self.checkDestination(
            destination, options: inPlace ? options.union(.removePreviousFile) : options)
        let file =
            resumable
            ? partialFile
            : (staging ?? configuration.temporaryDirectory).appendingPathComponent(
                ".courier-\(UUID().uuidString).download")
        let limit = transport.capabilities.maximumConnectionsPerHost ?? connections
        let download = SegmentedDownload(
            session: self, request: request, file: file, connections: max(1, min(connections, limit)),
            record: resumable ? ResumeRecord.location(for: partialFile) : nil, progress: progress)
        let first: StreamedResponse
        do {
            first = try await download.run(continuing: leftOver)
            if !inPlace {
                try DownloadFile(directory: file.deletingLastPathComponent(), appendingTo: file).move(
                    to: destination, options: options)
            }
        } catch {
            if !resumable { unlink(file.path) }
            throw error
        }
        return SessionResponse(
            request: first.request, response: first.head, fileURL: destination, metrics: first.metrics)
    }

    /// The split download a resume record beside `partialFile` describes, when the file is a
    /// regular file and the record names `url`'s scheme, host, port and path.
    private static func splitLeftOver(_ partialFile: URL, for url: URL) -> (
        RangedRepresentation, [Range<Int64>]
    )? {
        var info = stat()
        guard stat(partialFile.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
            let record = ResumeRecord.read(at: ResumeRecord.location(for: partialFile)),
            ResumeRecord.sameResource(record.url, url)
        else { return nil }
        return record.splitDownload
    }
}

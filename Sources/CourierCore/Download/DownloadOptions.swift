import Foundation

/// What to do around the destination of a download.
public struct DownloadOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    /// Makes options from raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Create missing parent directories of the destination.
    public static let createIntermediateDirectories = DownloadOptions(rawValue: 1 << 0)
    /// Replace an existing regular file at the destination (atomically, by rename; the new file
    /// keeps the old one's permission bits, and its owner and group where the process may set
    /// them). Without it, an existing file is a `.downloadDestinationExists` error and is left
    /// untouched. A symbolic link, device node, FIFO or socket at the destination is never
    /// replaced, with or without it: a rename would replace the link rather than write to its
    /// target, and would delete the device. That is a `.downloadDestinationExists` error too.
    public static let removePreviousFile = DownloadOptions(rawValue: 1 << 1)
    /// For a download to a destination named up front
    /// (``SessionManager/download(_:to:partialFile:options:progress:)``): stream into a partial
    /// file beside it (`destination.part`), keep the response's `ETag` and `Last-Modified` in
    /// a private record `.destination.part.courier-resume` (0600; the URL without query,
    /// fragment or user-info), keep both when the download fails or the process dies, and
    /// continue from them when they exist. A later request continues them when its scheme,
    /// host, port and path match the record's. Records of earlier versions
    /// (`destination.part.courier`) are ignored, and a file at the record's path that is not a
    /// record is never replaced or removed.
    ///
    /// Continuing sends `Range: bytes=N-` (N the partial file's length) with `If-Range` (the
    /// strong ETag, else Last-Modified). A `206` must start at N and is appended; a `200` (the
    /// validator changed, or the server ignores ranges) starts the file over; a `416` whose
    /// `Content-Range: bytes */N` says the file is already whole completes it without a body
    /// (curl treats any 416 that way; a 416 naming another length removes the partial file
    /// and fails, so the next attempt starts over). Any other status fails and leaves the
    /// partial file as it was. A response without a validator is downloaded, but its bytes are
    /// not kept when it fails: without one, a range could splice two versions together.
    public static let resumesPartialFile = DownloadOptions(rawValue: 1 << 2)
}

/// Chooses where a finished download goes, from the temporary file and the response
/// (AFNetworking's destination block). May throw to fail the task; the temporary file is then removed.
public typealias DownloadDestination = @Sendable (_ temporaryURL: URL, _ response: ResponseHead) throws -> URL

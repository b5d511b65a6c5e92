import Foundation

/// What to do around the destination of a download.
public struct DownloadOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    /// Makes options from raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Create missing parent directories of the destination.
    public static let createIntermediateDirectories = DownloadOptions(rawValue: 1 << 0)
    /// Replace an existing file at the destination (atomically). Without it, an existing file
    /// is a `.downloadDestinationExists` error and is left untouched.
    public static let removePreviousFile = DownloadOptions(rawValue: 1 << 1)
    /// For a download to a destination named up front
    /// (``SessionManager/download(_:to:partialFile:options:progress:)``): stream into a partial
    /// file beside it (`destination.part`), keep the response's `ETag` and `Last-Modified` in
    /// `destination.part.courier`, keep both when the download fails or the process dies, and
    /// continue from them when they exist.
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

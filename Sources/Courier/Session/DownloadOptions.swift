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
}

/// Chooses where a finished download goes, from the temporary file and the response
/// (AFNetworking's destination block). May throw to fail the task; the temporary file is then removed.
public typealias DownloadDestination = @Sendable (_ temporaryURL: URL, _ response: ResponseHead) throws -> URL

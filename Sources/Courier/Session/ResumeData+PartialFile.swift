import Foundation

/// The sidecar of a partial file (`<partial>.courier`, see ``DownloadOptions/resumesPartialFile``),
/// for code that keeps partial downloads its own way (the `courier` CLI's `--continue` keeps
/// them in the output file itself) and wants the same record of validators.
extension ResumeData {
    /// The resume data for a partial file an earlier process left: its length, and the
    /// validators in its sidecar. Nil when the file is missing or empty, or the sidecar is
    /// missing, unreadable, or holds no validator usable in `If-Range`.
    public init?(partialFile: URL) {
        guard let found = PartialDownload(destination: partialFile, partialFile: partialFile).leftOver() else {
            return nil
        }
        self = found
    }

    /// Writes the validators of `head` (the response whose body went to `partialFile`, from
    /// `url`) to the sidecar, replacing it atomically; removes it when `head` has none.
    /// - Throws: ``CourierError`` `.downloadFailed` when the sidecar cannot be written.
    public static func storeValidators(of head: ResponseHead, from url: URL, besidePartialFile partialFile: URL)
        throws
    {
        try PartialDownload(destination: partialFile, partialFile: partialFile).recordValidators(of: head, url: url)
    }

    /// Removes the sidecar of `partialFile`, if there is one.
    public static func removeValidators(besidePartialFile partialFile: URL) {
        PartialDownload(destination: partialFile, partialFile: partialFile).removeSidecar()
    }
}

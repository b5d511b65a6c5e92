import Foundation

/// The resume record of a partial file (`.<partial>.courier-resume` beside it, private, holding the
/// URL without its query; see ``DownloadOptions/resumesPartialFile``), for code that keeps
/// partial downloads its own way (the `courier` CLI's `--continue` keeps them in the output
/// file itself) and wants the same record of validators. Records of earlier versions
/// (`<partial>.courier`) are ignored.
extension ResumeData {
    /// The resume data for a partial file an earlier process left: its length, and the
    /// validators in its record. ``url`` is the record's: scheme, host, port and path only (see
    /// ``continues(_:)``). Nil when the file is missing, empty or not a regular file, or the
    /// record is missing, unreadable, or holds no validator usable in `If-Range`.
    public init?(partialFile: URL) {
        guard let found = PartialDownload(destination: partialFile, partialFile: partialFile).leftOver() else {
            return nil
        }
        self = found
    }

    /// Writes the validators of `head` (the response whose body went to `partialFile`, from
    /// `url`, stored without its query, fragment or user-info) to the record, created 0600 and
    /// replaced atomically; removes the record when `head` has none.
    /// - Throws: ``CourierError`` `.downloadFailed` when the record cannot be written, or a file
    ///   that is not a Courier record is at its path (that file is left as it was).
    public static func storeValidators(of head: ResponseHead, from url: URL, besidePartialFile partialFile: URL)
        throws
    {
        try PartialDownload(destination: partialFile, partialFile: partialFile).recordValidators(of: head, url: url)
    }

    /// Removes the record of `partialFile`, if there is one; a file at its path that is not a
    /// Courier record is left alone.
    public static func removeValidators(besidePartialFile partialFile: URL) {
        PartialDownload(destination: partialFile, partialFile: partialFile).removeSidecar()
    }

    /// Whether a request for `requestURL` continues these bytes: the same URL, or, when ``url``
    /// has no query and no user-info (as a record's never has), the same scheme, host, port and
    /// path. A query often carries a token that changes between attempts (a signed URL), and
    /// the `If-Range` validator, not the query, decides whether the bytes still fit.
    public func continues(_ requestURL: URL) -> Bool {
        if requestURL == url { return true }
        guard url.query == nil, url.user == nil, url.password == nil else { return false }
        return ResumeRecord.sameResource(requestURL, url)
    }
}

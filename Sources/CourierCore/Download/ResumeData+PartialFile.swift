import Foundation

/// The resume record of a partial file (`.<partial>.courier-resume` beside it, private, holding the
/// URL without its query; see ``DownloadOptions/resumesPartialFile`` and `ResumeRecord`): what a
/// download to a named destination keeps, and what code that keeps partial downloads its own way
/// (the `courier` CLI's `--continue` keeps them in the output file itself) uses for the same
/// record of validators. Records of earlier versions (`<partial>.courier`) are ignored.
extension ResumeData {
    /// The resume data for a partial file an earlier process left: its length, and the
    /// validators in its record. ``url`` is the record's: scheme, host, port and path only (see
    /// ``continues(_:)``). A split download's record gives its length and missing ranges
    /// (``missingRanges``). Nil when the file is missing, empty or not a regular file, or the
    /// record is missing, unreadable, or holds no validator usable in `If-Range`.
    public init?(partialFile: URL) {
        var info = stat()
        guard stat(partialFile.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size > 0,
            let record = ResumeRecord.read(at: ResumeRecord.location(for: partialFile))
        else { return nil }
        self.init(
            url: record.url, bytesWritten: Int64(info.st_size), entityTag: record.entityTag,
            lastModified: record.lastModified, partialFileURL: partialFile)
        if let (representation, missing) = record.splitDownload {
            totalLength = representation.length
            missingRanges = missing
            bytesWritten = representation.length - missing.reduce(0) { $0 + $1.upperBound - $1.lowerBound }
        } else if record.missing != nil {
            return nil
        }
        if ifRangeValidator == nil { return nil }
    }

    /// Writes the validators of `head` (the response whose body went to `partialFile`, from
    /// `url`, stored without its query, fragment or user-info) to the record, created 0600 and
    /// replaced atomically, before the first byte of the body goes into the file; removes the
    /// record when `head` has none: such bytes cannot be resumed.
    /// - Throws: ``CourierError`` `.downloadFailed` when the record cannot be written, or a file
    ///   that is not a Courier record is at its path (that file is left as it was).
    public static func storeValidators(of head: ResponseHead, from url: URL, besidePartialFile partialFile: URL)
        throws
    {
        guard let record = ResumeRecord(from: head, url: url) else {
            return removeValidators(besidePartialFile: partialFile)
        }
        try record.write(to: ResumeRecord.location(for: partialFile))
    }

    /// Removes the record of `partialFile`, if there is one: the download finished or its bytes
    /// are no use. A file at its path that is not a Courier record is left alone.
    public static func removeValidators(besidePartialFile partialFile: URL) {
        ResumeRecord.remove(at: ResumeRecord.location(for: partialFile))
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

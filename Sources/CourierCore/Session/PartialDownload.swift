import Foundation

/// A download that streams into a partial file beside its destination and keeps the response's
/// validators next to it, so that another process (after a crash, a kill, a reboot) can
/// continue it with `Range` and `If-Range`, as `curl -C -` and `wget -c` do.
///
/// The validators go in a small record beside the partial file, `.<partial>.courier-resume`
/// (``ResumeRecord``: private, JSON, the URL without its query), not in an extended attribute:
/// user xattrs are missing on tmpfs before Linux 6.6, on many network and FAT file systems, and
/// are dropped by `cp` and `rsync` without `-X`, while a record works wherever the partial file
/// does and a user can see and delete it. The partial file's own length is the count of bytes
/// kept: nothing else has to be updated while bytes arrive, so a process killed at any moment
/// leaves a consistent pair. The record is written (atomically, by rename) before the first
/// byte of a body goes into the partial file, and removed once the file is moved to its destination.
struct PartialDownload: Sendable {
    /// The file the body streams into.
    let partialFile: URL
    /// Where the finished file goes.
    let destination: URL

    /// The resume record beside ``partialFile``.
    var sidecar: URL { ResumeRecord.location(for: partialFile) }

    /// `destination.part` unless a partial file is named.
    init(destination: URL, partialFile: URL?) {
        self.destination = destination
        self.partialFile = partialFile ?? URL(fileURLWithPath: destination.path + ".part")
    }

    /// The resume data for what a previous process left: the partial file's length with the
    /// record's validators; nil (start over) when either is missing, the file is empty, the
    /// record is unreadable, or it holds no validator usable in `If-Range`. The resume data's
    /// URL is the record's, without a query: ``ResumeData`` matches it to a request by scheme,
    /// host, port and path. A split download's record gives its length and missing ranges
    /// (``ResumeData/missingRanges``).
    func leftOver() -> ResumeData? {
        var info = stat()
        guard stat(partialFile.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size > 0,
            let validators = ResumeRecord.read(at: sidecar)
        else { return nil }
        var resumeData = ResumeData(
            url: validators.url, bytesWritten: Int64(info.st_size), entityTag: validators.entityTag,
            lastModified: validators.lastModified, partialFileURL: partialFile)
        if let (representation, missing) = validators.splitDownload {
            resumeData.totalLength = representation.length
            resumeData.missingRanges = missing
            resumeData.bytesWritten = representation.length - missing.reduce(0) { $0 + $1.upperBound - $1.lowerBound }
        } else if validators.missing != nil {
            return nil
        }
        return resumeData.ifRangeValidator == nil ? nil : resumeData
    }

    /// Opens the partial file for a response's body: appended to when it continues the file,
    /// emptied (or created) otherwise.
    /// - Throws: ``CourierError`` `.downloadFailed`.
    func open(appending: Bool, temporaryDirectory: URL) throws -> DownloadFile {
        if !appending {
            let parent = partialFile.deletingLastPathComponent()
            if !FileManager.default.fileExists(atPath: parent.path) {
                throw CourierError(
                    .downloadFailed, "the directory \(parent.path) of the partial download does not exist",
                    offendingInput: parent.path)
            }
        }
        return try DownloadFile(directory: temporaryDirectory, appendingTo: partialFile, truncating: !appending)
    }

    /// Stores the validators of `head` (the response whose body is about to be written) in the
    /// record, or removes the record when the response has none: such bytes cannot be resumed.
    /// - Throws: ``CourierError`` `.downloadFailed` when the record cannot be written, or a file
    ///   that is not a record is in its place.
    func recordValidators(of head: ResponseHead, url: URL) throws {
        let entityTag = head.value(forHTTPHeaderField: "ETag")
        let lastModified = head.value(forHTTPHeaderField: "Last-Modified")
        guard entityTag != nil || lastModified != nil,
            let record = ResumeRecord(url: url, entityTag: entityTag, lastModified: lastModified)
        else {
            removeSidecar()
            return
        }
        try record.write(to: sidecar)
    }

    /// Whether the bytes kept after a failure can be continued later: some bytes, and a record.
    func isResumable(_ file: DownloadFile) -> Bool {
        file.bytesWritten > 0 && ResumeRecord.read(at: sidecar) != nil
    }

    /// Removes the record (only if it is one): the download finished or its bytes are no use.
    func removeSidecar() {
        ResumeRecord.remove(at: sidecar)
    }

    /// The destination, whatever the response: the caller named it up front.
    var destinationClosure: DownloadDestination {
        let destination = destination
        return { _, _ in destination }
    }
}

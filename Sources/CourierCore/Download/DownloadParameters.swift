import Foundation

extension SessionTask {
    /// What a download task does with its body: where it goes, how it continues earlier bytes,
    /// and where it is written while it arrives.
    struct DownloadParameters: Sendable {
        var options: DownloadOptions
        var destination: DownloadDestination
        var resumeData: ResumeData?
        /// Set for a download that streams into a resumable partial file, whose record
        /// (``ResumeData/storeValidators(of:from:besidePartialFile:)``) is kept beside it
        /// (``DownloadOptions/resumesPartialFile``).
        var partialFile: URL?
        /// The destination's directory when it is known up front (finishing is then a rename,
        /// never a copy across file systems); nil for the session's temporary directory.
        var stagingDirectory: URL?

        /// The file a resumable download to `destination` streams into: `partialFile`, else `destination.part`.
        static func partialFile(_ partialFile: URL?, for destination: URL) -> URL {
            partialFile ?? URL(fileURLWithPath: destination.path + ".part")
        }

        /// How a response continues the resume data, for ``SessionTask/receiveFile``: as
        /// ``ResumeData/continuation(for:)`` says, except that a resumable partial file is never
        /// overwritten by an error page (a status outside 2xx other than 416 fails and keeps it),
        /// and one that a 206 or 416 shows is not a prefix of the representation is removed, so
        /// the next attempt starts over instead of failing the same way.
        /// - Throws: ``CourierError`` `.invalidResumeData` or `.downloadFailed`.
        func continuation(for head: ResponseHead, resuming resumeData: ResumeData) throws -> ResumeData.Continuation {
            guard let partialFile else { return try resumeData.continuation(for: head) }
            if !(200...299).contains(head.statusCode) && head.statusCode != 416 {
                throw CourierError(
                    .downloadFailed,
                    "\(head.url.absoluteString) answered \(head.statusCode); the partial download \(partialFile.path) was kept",
                    offendingInput: head.url.absoluteString, response: head)
            }
            do {
                return try resumeData.continuation(for: head)
            } catch var error as CourierError {
                unlink(partialFile.path)
                ResumeData.removeValidators(besidePartialFile: partialFile)
                error.message += "; the partial download \(partialFile.path) was removed, the next attempt starts over"
                throw error
            }
        }

        /// Opens the file for a response's body: the partial file when resumable (appended to
        /// when the response continues it, emptied or created otherwise), else a new temporary
        /// file. A partial file whose body is not `resumable` (decoded from a content coding)
        /// gets no record, so no later process continues it.
        /// - Throws: ``CourierError`` `.downloadFailed`.
        func openFile(
            for head: ResponseHead, url: URL, continuation: ResumeData.Continuation, resumable: Bool,
            temporaryDirectory: URL
        ) throws -> DownloadFile {
            guard let partialFile else {
                if let resumeData {
                    return try DownloadFile(
                        directory: temporaryDirectory, appendingTo: resumeData.partialFileURL,
                        truncating: continuation == .restart)
                }
                return try DownloadFile(
                    directory: stagingDirectory ?? temporaryDirectory, hidden: stagingDirectory != nil)
            }
            let appending = resumeData != nil && continuation != .restart
            let parent = partialFile.deletingLastPathComponent()
            if !appending, !FileManager.default.fileExists(atPath: parent.path) {
                throw CourierError(
                    .downloadFailed, "the directory \(parent.path) of the partial download does not exist",
                    offendingInput: parent.path)
            }
            let file = try DownloadFile(directory: temporaryDirectory, appendingTo: partialFile, truncating: !appending)
            if continuation == .restart {
                if resumable {
                    try ResumeData.storeValidators(of: head, from: url, besidePartialFile: partialFile)
                } else {
                    ResumeData.removeValidators(besidePartialFile: partialFile)
                }
            }
            return file
        }

        /// After a failure: whether `file` is kept for a later resume (the caller then reports
        /// the resume data) or discarded: a resumable partial file with some bytes and a record.
        func keepsPartialFile(_ file: DownloadFile) -> Bool {
            guard let partialFile else { return false }
            if file.bytesWritten > 0, ResumeRecord.read(at: ResumeRecord.location(for: partialFile)) != nil {
                return true
            }
            ResumeData.removeValidators(besidePartialFile: partialFile)
            return false
        }
    }
}

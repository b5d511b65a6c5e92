import Foundation
import NIOCore

/// Reading a response body into a file that a download then moves into place, keeping what
/// resume data needs when it is cancelled.
extension SessionTask {
    /// Writes `body` to the download's file. `resumable` is false for a body the transport
    /// decoded: its bytes on disk are not the ones a `Range` counts, so nothing is kept for a resume.
    func receiveFile(
        _ body: BodyChunks, head: ResponseHead, request: Request, download: DownloadParameters, resumable: Bool,
        temporaryDirectory: URL, didReceiveData: (@Sendable (SessionTask, ByteBuffer) -> Void)?,
        resumeData leftOver: inout ResumeData?
    ) async throws -> (url: URL, bytesReceived: Int64) {
        let file: DownloadFile
        var continuation = ResumeData.Continuation.restart
        if let resumeData = download.resumeData {
            continuation = try download.continuation(for: head, resuming: resumeData)
        }
        file = try download.openFile(
            for: head, url: request.url, continuation: continuation, resumable: resumable,
            temporaryDirectory: temporaryDirectory)
        if case .alreadyComplete = continuation {
            // The partial file already holds the whole representation (a 416 naming its length).
            await Self.drain(body)
            try beginDelivering()
            return (try moveIntoPlace(file, head: head, download: download), 0)
        }
        let startOffset = file.bytesWritten
        let bodyLength = Self.expectedLength(head, request: request)
        let total = bodyLength.map { $0 + startOffset }
        do {
            var iterator = body.makeAsyncIterator()
            // A hook that sees every chunk needs them here, on the task.
            var fileWriter = didReceiveData == nil ? body.fileWriter : nil
            try await waitWhileSuspended(reportingDownload: startOffset > 0 ? startOffset : nil, of: total)
            while let chunk = try await iterator.next() {
                didReceiveData?(self, chunk)
                let started = fileWriter == nil ? nil : NIODeadline.now()
                try file.write(chunk)
                let keptUp = started.map { NIODeadline.now() - $0 < ResponseBodyFile.stallLimit } ?? false
                try await waitWhileSuspended(reportingDownload: file.bytesWritten, of: total)
                // The file is handed over only when this first write showed that writes keep up.
                if let writer = fileWriter {
                    fileWriter = nil
                    guard keptUp else { continue }
                    try await writer.writeRemainingBody(
                        to: ResponseBodyFile(file: file) { [self] size in
                            // The transport may go on writing while the task is neither paused nor stopping.
                            (try? self.isPaused(reportingDownload: size, of: total)) == false
                        }
                    )
                    try await waitWhileSuspended(reportingDownload: file.bytesWritten, of: total)
                }
            }
            try beginDelivering()
            let received = file.bytesWritten - startOffset
            return (try moveIntoPlace(file, head: head, download: download), received)
        } catch {
            let keep = resumable && machine.withLockedValue { $0.keepsPartialFile }
            let entityTag = head.value(forHTTPHeaderField: "ETag")
            let lastModified = head.value(forHTTPHeaderField: "Last-Modified")
            if download.keepsPartialFile(file) {
                file.closeDescriptor()
                leftOver = download.partialFile.flatMap(ResumeData.init(partialFile:))
            } else if keep, file.bytesWritten > 0, (200...299).contains(head.statusCode),
                entityTag != nil || lastModified != nil
            {
                file.closeDescriptor()
                leftOver = ResumeData(
                    url: request.url, bytesWritten: file.bytesWritten, entityTag: entityTag,
                    lastModified: lastModified, partialFileURL: file.url)
            } else {
                file.discard()
            }
            throw error
        }
    }

    /// Asks the destination where the finished file goes and moves it there.
    /// - Throws: the destination's error, `.downloadDestinationExists` or `.downloadFailed`.
    private func moveIntoPlace(_ file: DownloadFile, head: ResponseHead, download: DownloadParameters) throws -> URL {
        file.closeDescriptor()
        do {
            let destination: URL
            do {
                destination = try download.destination(file.url, head)
            } catch {
                throw CourierError.wrapping(
                    error, as: .hookFailed, "the download destination for \(head.url.absoluteString) threw")
            }
            try file.move(to: destination, options: download.options)
            if let partialFile = download.partialFile { ResumeData.removeValidators(besidePartialFile: partialFile) }
            report(\.downloadProgress, to: downloadProgressHandler) { $0.finish() }
            return destination
        } catch {
            // A resumable partial file stays: a later attempt finds it whole (416) and moves it.
            if download.partialFile == nil { file.discard() }
            throw error
        }
    }
}

import Foundation
import NIOCore
import NIOFoundationCompat

/// Reading a response body: into memory (capped), or into a file that a download then moves
/// into place, keeping what resume data needs when it is cancelled.
extension SessionTask {
    /// Reads a small redirect or retried body so the connection can be reused; a big one is dropped,
    /// which closes the connection instead of reading megabytes nobody wants.
    static func drain(_ body: BodyChunks) async {
        var remaining = 64 * 1024
        var iterator = body.makeAsyncIterator()
        while remaining > 0, let chunk = try? await iterator.next() {
            remaining -= chunk.readableBytes
        }
    }

    private static func expectedLength(_ head: ResponseHead, request: Request) -> Int64? {
        if request.method == .head || head.statusCode == 204 || head.statusCode == 304 { return 0 }
        // Content-Length counts encoded bytes; a decompressing transport delivers more.
        if head.hasContentCoding { return nil }
        return head.expectedContentLength
    }

    func receiveData(
        _ body: BodyChunks, head: ResponseHead, request: Request, cap: Int,
        didReceiveData: (@Sendable (SessionTask, ByteBuffer) -> Void)?
    ) async throws -> Data {
        let total = Self.expectedLength(head, request: request)
        if let total, total > Int64(cap) {
            throw tooLarge(head: head, request: request, cap: cap, size: "declares \(total) bytes")
        }
        var collected: ByteBuffer?
        var received: Int64 = 0
        var iterator = body.makeAsyncIterator()
        try await waitWhileSuspended()
        while let chunk = try await iterator.next() {
            received += Int64(chunk.readableBytes)
            if received > Int64(cap) {
                throw tooLarge(head: head, request: request, cap: cap, size: "has more than \(cap) bytes")
            }
            didReceiveData?(self, chunk)
            if collected == nil {
                collected = chunk
            } else {
                var chunk = chunk
                if collected!.readableBytes == received - Int64(chunk.readableBytes), let total {
                    // Reserve once for the whole body instead of growing step by step.
                    collected!.reserveCapacity(
                        minimumWritableBytes: Int(max(0, total - received + Int64(chunk.readableBytes))))
                }
                collected!.writeBuffer(&chunk)
            }
            try await waitWhileSuspended(reportingDownload: received, of: total)
        }
        try beginDelivering(finishingDownload: true)
        guard var collected else { return Data() }
        return collected.readData(length: collected.readableBytes, byteTransferStrategy: .automatic) ?? Data()
    }

    /// What a handed-over download file (``ResponseBodyFile``) reports after each write, on the transport's thread:
    /// the progress, and whether the transport may go on writing (not while the task is paused or stopping).
    private func handedOverFileDidWrite(_ size: Int64, of total: Int64?) -> Bool {
        let now = machine.withLockedValue { machine in
            (
                progress: machine.downloadProgress.advance(completed: size, total: total),
                keepsGoing: !machine.isPaused && !machine.isStopping
            )
        }
        guard let progress = now.progress, let handler = downloadProgressHandler else { return now.keepsGoing }
        // The handler may have paused or cancelled the task.
        handler(progress)
        return machine.withLockedValue { !$0.isPaused && !$0.isStopping }
    }

    private func tooLarge(head: ResponseHead, request: Request, cap: Int, size: String) -> CourierError {
        CourierError(
            .responseTooLarge,
            "the response from \(request.url.absoluteString) \(size), over the \(cap)-byte cap for buffered responses; use a download task to stream it to a file",
            offendingInput: request.url.absoluteString, response: head)
    }

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
            if startOffset > 0 { reportDownload(completed: startOffset, total: total) }
            var iterator = body.makeAsyncIterator()
            // A hook that sees every chunk needs them here, on the task.
            var fileWriter = didReceiveData == nil ? body.fileWriter : nil
            try await waitWhileSuspended()
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
                        to: ResponseBodyFile(file: file) { [self] size in self.handedOverFileDidWrite(size, of: total) }
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
                leftOver = download.partial?.leftOver()
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
                throw CourierError.hookFailed(error, "the download destination for \(head.url.absoluteString) threw")
            }
            try file.move(to: destination, options: download.options)
            download.partial?.removeSidecar()
            finishDownload()
            return destination
        } catch {
            // A resumable partial file stays: a later attempt finds it whole (416) and moves it.
            if download.partial == nil { file.discard() }
            throw error
        }
    }
}

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

    /// Reads the body into memory, up to `cap` bytes.
    ///
    /// Only the loop's awaits are here; what happens to each chunk is done by synchronous
    /// functions that are not inlined (``BufferedBody``), so that the async frame a receiving
    /// task holds keeps only what lives across a suspension, not the temporaries of the cap's
    /// errors (at 10,000 open HTTP/2 requests, each answered within a second, most tasks wait
    /// here at once).
    /// - Throws: `.responseTooLarge` past the cap, `.cancelled` once the task is stopping, or the
    ///   transport's error.
    func receiveData(
        _ body: BodyChunks, head: ResponseHead, request: Request, cap: Int,
        didReceiveData: (@Sendable (SessionTask, ByteBuffer) -> Void)?
    ) async throws -> Data {
        var buffered = try BufferedBody(
            expecting: Self.expectedLength(head, request: request), url: request.url, head: head, cap: cap)
        var iterator = body.makeAsyncIterator()
        try await waitWhileSuspended()
        while let chunk = try await iterator.next() {
            try buffered.append(chunk, head: head, cap: cap)
            didReceiveData?(self, chunk)
            try await waitWhileSuspended(reportingDownload: buffered.received, of: buffered.total)
        }
        try beginDelivering(finishingDownload: true)
        return buffered.data()
    }

    /// A body collected in memory, checked against the cap as it grows.
    struct BufferedBody {
        /// The body's length as its head declares it, when it does.
        let total: Int64?
        /// The request's URL, for the cap's error.
        let url: URL
        private(set) var received: Int64 = 0
        private var collected: ByteBuffer?

        /// - Throws: `.responseTooLarge` when the declared length is over `cap` already.
        @inline(never)
        init(expecting total: Int64?, url: URL, head: ResponseHead, cap: Int) throws {
            self.total = total
            self.url = url
            if let total, total > Int64(cap) {
                throw SessionTask.tooLarge(head: head, url: url, cap: cap, size: "declares \(total) bytes")
            }
        }

        /// Adds `chunk`, reserving room for the whole declared body once the second chunk comes.
        /// - Throws: `.responseTooLarge` once more than `cap` bytes came.
        @inline(never)
        mutating func append(_ chunk: ByteBuffer, head: ResponseHead, cap: Int) throws {
            received += Int64(chunk.readableBytes)
            if received > Int64(cap) {
                throw SessionTask.tooLarge(head: head, url: url, cap: cap, size: "has more than \(cap) bytes")
            }
            guard var body = collected else {
                collected = chunk
                return
            }
            collected = nil
            var chunk = chunk
            if body.readableBytes == received - Int64(chunk.readableBytes), let total {
                // Reserve once for the whole body instead of growing step by step.
                body.reserveCapacity(
                    minimumWritableBytes: Int(max(0, total - received + Int64(chunk.readableBytes))))
            }
            body.writeBuffer(&chunk)
            collected = body
        }

        /// The bytes collected, as `Data`.
        @inline(never)
        mutating func data() -> Data {
            guard var collected else { return Data() }
            return collected.readData(length: collected.readableBytes, byteTransferStrategy: .automatic) ?? Data()
        }
    }

    fileprivate static func tooLarge(head: ResponseHead, url: URL, cap: Int, size: String) -> CourierError {
        CourierError(
            .responseTooLarge,
            "the response from \(url.absoluteString) \(size), over the \(cap)-byte cap for buffered responses; use a download task to stream it to a file",
            offendingInput: url.absoluteString, response: head)
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
                throw CourierError.wrapping(
                    error, as: .hookFailed, "the download destination for \(head.url.absoluteString) threw")
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

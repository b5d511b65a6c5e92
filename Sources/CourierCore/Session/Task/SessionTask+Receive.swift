import Foundation
import NIOCore
import NIOFoundationCompat

/// Reading a response body into memory (capped); a download's file is written in
/// SessionTask+ReceiveFile.swift.
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

    static func expectedLength(_ head: ResponseHead, request: Request) -> Int64? {
        if request.method == .head || head.statusCode == 204 || head.statusCode == 304 { return 0 }
        // Content-Length counts encoded bytes; a decompressing transport delivers more.
        let declared = head.declaredBody
        return declared.isCoded ? nil : declared.length
    }

    /// Reads the body into memory, up to `cap` bytes. The caller has waited while the task was
    /// paused before the first chunk (``deliver(_:request:hooks:resumeData:observer:)`` in the
    /// turn of the lock that keeps the head).
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
        while let chunk = try await iterator.next() {
            try buffered.append(chunk, head: head, cap: cap)
            didReceiveData?(self, chunk)
            // Once the declared body is all in, no chunk is left to pause before: its progress
            // goes with the delivery's turn of the lock below.
            if buffered.received != buffered.total {
                try await waitWhileSuspended(reportingDownload: buffered.received, of: buffered.total)
            }
        }
        try beginDelivering(finishingDownloadAt: buffered.received, of: buffered.total)
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
}

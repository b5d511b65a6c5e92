import NIOCore

/// Wraps a body's chunks so each chunk handed onward is counted for upload progress.
///
/// Large in-memory buffers are cut into slices (which share storage, so nothing is copied) so
/// that progress moves in steps of at most ``sliceSize`` rather than in one jump.
struct UploadProgressChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    static let sliceSize = 1 << 20

    let base: BodyChunks
    let report: @Sendable (Int64) -> Void

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), report: report)
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: BodyChunks.AsyncIterator
        let report: @Sendable (Int64) -> Void
        var pending: ByteBuffer?
        var sent: Int64 = 0

        init(base: BodyChunks.AsyncIterator, report: @escaping @Sendable (Int64) -> Void) {
            self.base = base
            self.report = report
        }

        mutating func next() async throws -> ByteBuffer? {
            if pending == nil || pending?.readableBytes == 0 {
                pending = try await base.next()
            }
            guard var buffer = pending else { return nil }
            let slice: ByteBuffer
            if buffer.readableBytes > UploadProgressChunks.sliceSize,
                let head = buffer.readSlice(length: UploadProgressChunks.sliceSize)
            {
                slice = head
                pending = buffer
            } else {
                slice = buffer
                pending = nil
            }
            sent += Int64(slice.readableBytes)
            report(sent)
            return slice
        }
    }
}

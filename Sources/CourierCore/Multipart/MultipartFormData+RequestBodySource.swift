import Foundation
import NIOCore

/// A form is a request body: `RequestBody.source(form)`.
extension MultipartFormData: RequestBodySource {
    /// The body as memory and file regions, so that a transport can send file parts with
    /// sendfile: boundaries and headers are slices of one shared buffer, `ByteBuffer` parts are
    /// handed over as they are, `Data` parts are copied once into a buffer, and files are
    /// `.file(path:offset:length:)`. Nil when a part is a stream or an append recorded an error
    /// (`makeChunks()` then reports it), and nil for a throttled form, whose pacing only the
    /// chunk reader applies.
    public var segments: [BodySegment]? {
        guard deferredError == nil, throttle == nil else { return nil }
        var segments: [BodySegment] = []
        segments.reserveCapacity(pieces.count + 1)
        for piece in allPieces {
            switch piece {
            case .inline(let offset, let length):
                segments.append(.bytes(storage.getSlice(at: offset, length: length) ?? ByteBuffer()))
            case .buffer(let buffer): segments.append(.bytes(buffer))
            case .data(let data): segments.append(.bytes(ByteBuffer(bytes: data)))
            case .file(let path, let length): segments.append(.file(path: path, offset: 0, length: length))
            case .stream: return nil
            }
        }
        return segments
    }

    /// A fresh asynchronous sequence of the body's bytes, for every kind of part. In-memory
    /// parts are handed over without a copy (slices of the shared buffer, or the caller's
    /// `ByteBuffer`); `Data` parts and input streams go out in 1 MiB copies; files are read in
    /// 1 MiB chunks. When throttled, chunks are at most the packet size and the delay is a
    /// cancellable `Task.sleep` between them.
    /// - Throws: ``CourierError``: an input recorded by a non-throwing append;
    ///   `.bodyNotReplayable` when a one-shot stream part was already read. Iterating throws
    ///   `.bodyLengthMismatch`, `.invalidFile` or `.streamReadFailed` as the reader does.
    public func makeChunks() throws -> BodyChunks {
        try validate()
        for case .stream(let part) in pieces { try part.reserve() }
        let storage = storage
        let pieces = allPieces
        let throttle = throttle
        return BodyChunks(makeNext: {
            let producer = MultipartChunkProducer(storage: storage, pieces: pieces, throttle: throttle)
            return { try await producer.next() }
        })
    }
}

/// Produces a form's body as ByteBuffers, piece by piece, checking declared lengths.
final class MultipartChunkProducer {
    static let copyChunkSize = 1 << 20

    private let storage: ByteBuffer
    private let pieces: [MultipartPiece]
    private let throttle: MultipartFormData.Throttle?
    private var index = 0
    private var position: Int64 = 0
    private var fileChunks: FileChunks.AsyncIterator?
    private var streamChunks: BodyChunks.AsyncIterator?
    private var inputStream: InputStream?
    /// A chunk being handed out in packet-size slices when throttled.
    private var pending: ByteBuffer?
    private var hasYielded = false
    private var allocator = ByteBufferAllocator()

    init(storage: ByteBuffer, pieces: [MultipartPiece], throttle: MultipartFormData.Throttle?) {
        self.storage = storage
        self.pieces = pieces
        self.throttle = throttle
    }

    deinit { inputStream?.close() }

    func next() async throws -> ByteBuffer? {
        guard let throttle else { return try await nextUnthrottled() }
        if pending == nil || pending?.readableBytes == 0 { pending = try await nextUnthrottled() }
        guard var chunk = pending else { return nil }
        if hasYielded, throttle.delay > 0 {
            try await Task.sleep(nanoseconds: UInt64(throttle.delay * 1_000_000_000))
        }
        hasYielded = true
        let slice = chunk.readSlice(length: Swift.min(throttle.packetSize, chunk.readableBytes)) ?? ByteBuffer()
        pending = chunk
        return slice
    }

    private func nextUnthrottled() async throws -> ByteBuffer? {
        while index < pieces.count {
            let piece = pieces[index]
            if let chunk = try await nextChunk(of: piece) { return chunk }
            index += 1
            position = 0
        }
        return nil
    }

    /// The next chunk of `piece`, or nil (after its end checks) when it is done.
    private func nextChunk(of piece: MultipartPiece) async throws -> ByteBuffer? {
        switch piece {
        case .inline(let offset, let length):
            guard position == 0, length > 0 else { return nil }
            position = Int64(length)
            return storage.getSlice(at: offset, length: length)
        case .buffer(let buffer):
            guard position == 0, buffer.readableBytes > 0 else { return nil }
            position = Int64(buffer.readableBytes)
            return buffer
        case .data(let data):
            let start = Int(position)
            guard start < data.count else { return nil }
            let end = Swift.min(data.count, start + Self.copyChunkSize)
            let base = data.startIndex
            position = Int64(end)
            return ByteBuffer(bytes: data[(base + start)..<(base + end)])
        case .file(let path, let length):
            if fileChunks == nil { fileChunks = FileChunks(path: path, offset: 0, length: length).makeAsyncIterator() }
            if let chunk = try await fileChunks?.next() { return chunk }
            fileChunks = nil
            return nil
        case .stream(let part):
            return try await nextChunk(of: part)
        }
    }

    private func nextChunk(of part: MultipartStreamPart) async throws -> ByteBuffer? {
        if streamChunks == nil, inputStream == nil {
            switch try part.open() {
            case .chunks(let chunks): streamChunks = chunks.makeAsyncIterator()
            case .inputStream(let input):
                if input.streamStatus == .notOpen { input.open() }
                inputStream = input
            }
        }
        let remaining = part.length - position
        if var iterator = streamChunks {
            let chunk = try await iterator.next()
            streamChunks = iterator
            guard let chunk else {
                if remaining != 0 { throw part.shortError(read: position) }
                streamChunks = nil
                return nil
            }
            if Int64(chunk.readableBytes) > remaining { throw part.longError() }
            position += Int64(chunk.readableBytes)
            // An empty chunk is legal in a sequence but means nothing on the wire; ask again.
            return chunk.readableBytes == 0 ? try await nextChunk(of: part) : chunk
        }
        guard let input = inputStream else { return nil }
        if remaining == 0 {
            defer {
                input.close()
                inputStream = nil
            }
            try part.checkEnded(input)
            return nil
        }
        let count = Int(Swift.min(remaining, Int64(Self.copyChunkSize)))
        var buffer = allocator.buffer(capacity: count)
        let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
            guard let base = pointer.baseAddress else { return 0 }
            return input.read(base.assumingMemoryBound(to: UInt8.self), maxLength: count)
        }
        if read < 0 { throw part.readFailedError() }
        if read == 0 { throw part.shortError(read: position) }
        position += Int64(read)
        return buffer
    }
}

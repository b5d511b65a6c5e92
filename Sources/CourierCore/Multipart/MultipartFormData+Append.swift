import Foundation
import NIOCore

extension MultipartFormData {
    /// `Data` parts up to this size are copied into the form's shared buffer; larger ones are
    /// kept by reference, so a big in-memory part is never held twice.
    static let inlineDataLimit = 64 * 1024

    // MARK: In-memory parts

    /// Appends a text field: `Content-Disposition: form-data; name="…"` and `text` as UTF-8.
    public mutating func append(_ text: String, name: String) {
        let start = writePartHead(name: name, fileName: nil, mimeType: nil, extraHeaders: [])
        storage.writeString(text)
        extendInline(from: start)
    }

    /// Appends `data` as a field, or as a file when `fileName` is given (as a browser sends an
    /// `<input type=file>`); `mimeType`, when given, is sent as the part's `Content-Type`.
    ///
    /// A `mimeType` with CR, LF or NUL is recorded and thrown as `.invalidHeader` when the body is
    /// read (``encode()``, ``makeReader()``, `makeChunks()`, ``validate()``), never sent.
    public mutating func append(_ data: Data, name: String, fileName: String? = nil, mimeType: String? = nil) {
        recordIfInvalid(mimeType: mimeType)
        let start = writePartHead(name: name, fileName: fileName, mimeType: mimeType, extraHeaders: [])
        appendBody(data, afterHeadAt: start)
    }

    /// Appends `buffer` as ``append(_:name:fileName:mimeType:)-(Data,_,_,_)`` does `Data`; the
    /// buffer is shared, not copied, and handed to the transport as it is.
    public mutating func append(
        _ buffer: ByteBuffer, name: String, fileName: String? = nil, mimeType: String? = nil
    ) {
        recordIfInvalid(mimeType: mimeType)
        let start = writePartHead(name: name, fileName: fileName, mimeType: mimeType, extraHeaders: [])
        extendInline(from: start)
        if buffer.readableBytes > 0 { appendPiece(.buffer(buffer)) }
    }

    // MARK: Files

    /// Appends the file at `fileURL`, named after its last path component, with the MIME type
    /// that Courier's table gives its extension (``MIMETypes``). The size is read now.
    /// - Throws: ``CourierError`` `.invalidFile` when the URL is not a file URL, or the file is
    ///   missing, a directory or other non-regular file, or unreadable.
    public mutating func append(fileURL: URL, name: String) throws {
        let fileName = fileURL.lastPathComponent
        try append(fileURL: fileURL, name: name, fileName: fileName, mimeType: MIMETypes.type(forFileName: fileName))
    }

    /// Appends the file at `fileURL` with the given file name and MIME type. The size is read now:
    /// a file that shrinks later makes the upload fail with `.bodyLengthMismatch` (one that grows
    /// too, when read in chunks; sendfile sends the length read now).
    /// - Throws: ``CourierError`` `.invalidFile` as ``append(fileURL:name:)``; `.invalidHeader`
    ///   for a `mimeType` with CR, LF or NUL.
    public mutating func append(fileURL: URL, name: String, fileName: String, mimeType: String) throws {
        _ = try HeaderField.checkedValue(mimeType, for: "Content-Type")
        let info = try FileInfo(url: fileURL)
        let start = writePartHead(name: name, fileName: fileName, mimeType: mimeType, extraHeaders: [])
        extendInline(from: start)
        // Even an empty file is kept as a piece: it is opened when read, so one that grew is caught.
        appendPiece(.file(path: info.path, length: info.size))
    }

    // MARK: Streams

    /// Appends a replayable stream of `length` bytes: `makeStream` is called for every read of
    /// the body (each reader, each redirect or retry) and must return a fresh, unopened stream.
    /// A stream that yields fewer or more bytes than `length` fails the read with `.bodyLengthMismatch`.
    /// - Throws: ``CourierError`` `.invalidBodyLength` for a negative length; `.invalidHeader` for
    ///   a `mimeType` with CR, LF or NUL.
    public mutating func append(
        length: Int64, name: String, fileName: String? = nil, mimeType: String? = nil,
        makeStream: @escaping @Sendable () throws -> InputStream
    ) throws {
        try appendStream(
            length: length, name: name, fileName: fileName, mimeType: mimeType,
            source: .makeInputStream(makeStream))
    }

    /// Appends a one-shot input stream of `length` bytes. The form is then not replayable:
    /// a second read (a redirect, a retry, a second reader) fails with `.bodyNotReplayable`.
    /// - Throws: as ``append(length:name:fileName:mimeType:makeStream:)``.
    public mutating func append(
        _ stream: InputStream, length: Int64, name: String, fileName: String? = nil, mimeType: String? = nil
    ) throws {
        try appendStream(
            length: length, name: name, fileName: fileName, mimeType: mimeType,
            source: .inputStream(stream))
    }

    /// Appends a replayable asynchronous sequence of `length` bytes, made fresh for every read.
    /// Such a form can only be read asynchronously (`makeChunks()`); ``encode()`` and
    /// ``makeReader()`` fail with `.asyncPartNeedsAsyncRead`.
    /// - Throws: as ``append(length:name:fileName:mimeType:makeStream:)``.
    public mutating func append<Chunks: AsyncSequence & Sendable>(
        length: Int64, name: String, fileName: String? = nil, mimeType: String? = nil,
        makeSequence: @escaping @Sendable () -> Chunks
    ) throws where Chunks.Element == ByteBuffer {
        try appendStream(
            length: length, name: name, fileName: fileName, mimeType: mimeType,
            source: .makeChunks({ BodyChunks(makeSequence()) }))
    }

    /// Appends a one-shot asynchronous sequence of `length` bytes; see
    /// ``append(length:name:fileName:mimeType:makeSequence:)`` and ``append(_:length:name:fileName:mimeType:)``.
    /// - Throws: as ``append(length:name:fileName:mimeType:makeStream:)``.
    public mutating func append<Chunks: AsyncSequence & Sendable>(
        _ sequence: Chunks, length: Int64, name: String, fileName: String? = nil, mimeType: String? = nil
    ) throws where Chunks.Element == ByteBuffer {
        try appendStream(
            length: length, name: name, fileName: fileName, mimeType: mimeType,
            source: .chunks(BodyChunks(sequence)))
    }

    // MARK: Raw headers

    /// Appends a part with exactly the given headers and `body`. Headers are written in a fixed
    /// order: Content-Disposition, Content-Type, then the others in the order given.
    /// - Throws: ``CourierError`` `.invalidHeader` when a name is not an RFC 9110 token or a
    ///   value has CR, LF or NUL.
    public mutating func append(headers: [(name: String, value: String)], body: Data) throws {
        let ordered = try Self.orderedHeaders(headers)
        let start = writePartHead(name: nil, fileName: nil, mimeType: nil, extraHeaders: ordered)
        appendBody(body, afterHeadAt: start)
    }

    /// Appends a part with exactly the given headers and `body`, shared without a copy.
    /// - Throws: as ``append(headers:body:)-(_,Data)``.
    public mutating func append(headers: [(name: String, value: String)], body: ByteBuffer) throws {
        let ordered = try Self.orderedHeaders(headers)
        let start = writePartHead(name: nil, fileName: nil, mimeType: nil, extraHeaders: ordered)
        extendInline(from: start)
        if body.readableBytes > 0 { appendPiece(.buffer(body)) }
    }

    // MARK: Building blocks

    static func orderedHeaders(_ headers: [(name: String, value: String)]) throws -> [(String, String)] {
        var disposition: [(String, String)] = []
        var type: [(String, String)] = []
        var others: [(String, String)] = []
        for (name, value) in headers {
            let field = try HeaderField.make(name: name, value: value)
            switch field.name.canonicalName {
            case "content-disposition": disposition.append((name, value))
            case "content-type": type.append((name, value))
            default: others.append((name, value))
            }
        }
        return disposition + type + others
    }

    private mutating func appendStream(
        length: Int64, name: String, fileName: String?, mimeType: String?, source: MultipartStreamPart.Source
    ) throws {
        if let mimeType { _ = try HeaderField.checkedValue(mimeType, for: "Content-Type") }
        guard length >= 0 else {
            throw CourierError(
                .invalidBodyLength, "the length \(length) declared for multipart part \"\(name)\" is negative",
                offendingInput: String(length))
        }
        let start = writePartHead(name: name, fileName: fileName, mimeType: mimeType, extraHeaders: [])
        extendInline(from: start)
        let label = "\"" + HeaderField.escaped(name) + "\""
        appendPiece(.stream(MultipartStreamPart(length: length, label: label, source: source)))
    }

    private mutating func recordIfInvalid(mimeType: String?) {
        guard deferredError == nil, let mimeType else { return }
        do {
            _ = try HeaderField.checkedValue(mimeType, for: "Content-Type")
        } catch let error as CourierError {
            deferredError = error
        } catch {
            deferredError = CourierError(.invalidHeader, "invalid Content-Type", offendingInput: mimeType)
        }
    }

    /// Writes the delimiter and header block of a new part into storage; returns where it began.
    private mutating func writePartHead(
        name: String?, fileName: String?, mimeType: String?, extraHeaders: [(String, String)]
    ) -> Int {
        let start = storage.writerIndex
        if partCount == 0 {
            // The first part opens with `--B\r\n`: the delimiter without its leading CR LF.
            _ = delimiter.withUnsafeReadableBytes {
                storage.writeBytes(UnsafeRawBufferPointer(rebasing: $0.dropFirst(2)))
            }
        } else {
            storage.writeImmutableBuffer(delimiter)
        }
        MultipartHeaderEncoding.writeHeaders(
            name: name, fileName: fileName, mimeType: mimeType, extraHeaders: extraHeaders,
            fileNameEncoding: fileNameEncoding, into: &storage)
        partCount += 1
        return start
    }

    /// Records the storage bytes written since `start` as body, merging with a preceding inline piece.
    private mutating func extendInline(from start: Int) {
        let length = storage.writerIndex - start
        guard length > 0 else { return }
        lengthBeforeClose += Int64(length)
        if case .inline(let offset, let previous)? = pieces.last, offset + previous == start {
            pieces[pieces.count - 1] = .inline(offset: offset, length: previous + length)
        } else {
            pieces.append(.inline(offset: start, length: length))
        }
    }

    /// Ends the part whose head began at `start` with `data`: copied into storage when small,
    /// kept by reference past ``inlineDataLimit`` so a big in-memory part is never held twice.
    private mutating func appendBody(_ data: Data, afterHeadAt start: Int) {
        if data.count <= Self.inlineDataLimit {
            storage.writeBytes(data)
            extendInline(from: start)
        } else {
            extendInline(from: start)
            appendPiece(.data(data))
        }
    }

    private mutating func appendPiece(_ piece: MultipartPiece) {
        lengthBeforeClose += piece.length
        pieces.append(piece)
    }
}

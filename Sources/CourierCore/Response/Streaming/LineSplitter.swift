import NIOCore

/// Cuts a byte stream that arrives in chunks into lines, in place where a line lies within one
/// chunk, copying only a line that straddles two chunks (into one reused buffer).
struct LineSplitter: Sendable {
    /// Which bytes end a line.
    enum Terminators: Sendable {
        /// CR LF, LF or a lone CR, as text lines and event streams (HTML §9.2.5) have them.
        case carriageReturnOrLineFeed
        /// LF, with one CR before it dropped: NDJSON and JSON Lines, where a lone CR is no line end.
        case lineFeed
    }

    let terminators: Terminators
    /// The longest line, in bytes, before ``nextLine(from:_:)`` throws.
    let maximumLineLength: Int
    private var partial: [UInt8] = []
    private var lineEnds = LineEnds()

    init(terminators: Terminators, maximumLineLength: Int) {
        self.terminators = terminators
        self.maximumLineLength = max(1, maximumLineLength)
    }

    private static let lineFeed = LineEnds.lineFeed
    private static let carriageReturn = LineEnds.carriageReturn

    /// Reads `chunk` up to the next line end and hands `body` the line without its terminator;
    /// nil once the chunk is consumed without a line end (the rest is kept for the next chunk).
    /// - Throws: ``CourierError/Code/lineTooLong`` past ``maximumLineLength``; what `body` throws.
    mutating func nextLine<Result>(
        from chunk: inout ByteBuffer, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result? {
        var result: Result?
        let consumed: Int = try chunk.withUnsafeReadableBytes { bytes in
            let count = bytes.count
            var index = 0
            lineEnds.skipContinuation(at: &index, in: bytes)
            let start = index
            while index < count {
                let byte = bytes[index]
                let endsLine: Bool
                switch terminators {
                case .carriageReturnOrLineFeed: endsLine = byte == Self.lineFeed || byte == Self.carriageReturn
                case .lineFeed: endsLine = byte == Self.lineFeed
                }
                guard endsLine else {
                    index += 1
                    continue
                }
                var lineEnd = index
                lineEnds.skipLineEnd(at: &index, in: bytes)
                if partial.isEmpty {
                    if terminators == .lineFeed && lineEnd > start && bytes[lineEnd - 1] == Self.carriageReturn {
                        lineEnd -= 1
                    }
                    try checkLength(lineEnd - start)
                    result = try body(UnsafeRawBufferPointer(rebasing: bytes[start..<lineEnd]))
                } else {
                    try checkLength(partial.count + lineEnd - start)
                    partial.append(contentsOf: bytes[start..<lineEnd])
                    if terminators == .lineFeed && partial.last == Self.carriageReturn { partial.removeLast() }
                    defer { partial.removeAll(keepingCapacity: partial.capacity <= 64 * 1024) }
                    result = try partial.withUnsafeBytes(body)
                }
                return index
            }
            if start < count {
                try checkLength(partial.count + count - start)
                partial.append(contentsOf: bytes[start..<count])
            }
            return count
        }
        chunk.moveReaderIndex(forwardBy: consumed)
        return result
    }

    /// Ends the stream: hands `body` the last line when the stream did not end with a line end.
    mutating func finish<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result? {
        lineEnds = LineEnds()
        guard !partial.isEmpty else { return nil }
        if terminators == .lineFeed && partial.last == Self.carriageReturn { partial.removeLast() }
        defer { partial.removeAll() }
        return try partial.withUnsafeBytes(body)
    }

    private func checkLength(_ length: Int) throws {
        guard length <= maximumLineLength else {
            throw CourierError(
                .lineTooLong, "a line of the response body is longer than the limit of \(maximumLineLength) bytes")
        }
    }
}

import NIOCore

/// The lines of a body that arrives as `ByteBuffer` chunks, decoded as UTF-8 (invalid sequences
/// become U+FFFD), without their line ends. CR LF, LF and a lone CR each end a line, and a CR at
/// the end of one chunk with an LF at the start of the next is one line end. A last line without
/// a line end is still returned; a leading byte order mark is kept as U+FEFF.
///
/// Pull-based: a chunk is read from the base sequence only when the lines of the previous one
/// are used up, so a slow consumer holds at most one chunk and one partial line, and the
/// transport's backpressure reaches the server. Made by `lines()` on a sequence of `ByteBuffer`.
public struct ByteBufferLineSequence<Base: AsyncSequence>: AsyncSequence where Base.Element == ByteBuffer {
    public typealias Element = String

    let base: Base
    let maximumLineLength: Int

    /// Makes the line sequence of `base`; a line longer than `maximumLineLength` bytes throws.
    public init(_ base: Base, maximumLineLength: Int = ByteBufferLineSequence.defaultMaximumLineLength) {
        self.base = base
        self.maximumLineLength = maximumLineLength
    }

    /// The default cap on one line: 16 MiB.
    public static var defaultMaximumLineLength: Int { 16 * 1024 * 1024 }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            base: base.makeAsyncIterator(),
            splitter: LineSplitter(terminators: .carriageReturnOrLineFeed, maximumLineLength: maximumLineLength))
    }

    /// Reads lines one at a time, pulling the next chunk only when needed.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        var splitter: LineSplitter
        var chunk = ByteBuffer()
        var baseEnded = false

        /// The next line, or nil after the last one.
        /// - Throws: ``CourierError/Code/lineTooLong``, or what the base sequence throws.
        public mutating func next() async throws -> String? {
            while true {
                if let line = try splitter.nextLine(from: &chunk, { String(decoding: $0, as: UTF8.self) }) {
                    return line
                }
                if baseEnded { return nil }
                guard let next = try await base.next() else {
                    baseEnded = true
                    return splitter.finish { String(decoding: $0, as: UTF8.self) }
                }
                chunk = next
            }
        }
    }
}

extension ByteBufferLineSequence: Sendable where Base: Sendable {}

import Foundation
import NIOCore

/// The values of an NDJSON (JSON Lines) body that arrives as `ByteBuffer` chunks: one JSON text
/// per line, decoded into `Value`. Lines end at LF, with one CR before it dropped; blank lines
/// (only spaces, tabs or nothing) are skipped, but still counted in line numbers.
///
/// Pull-based: the next chunk is read only when the lines of the previous one are used up.
/// Made by `jsonLines(of:)`.
public struct JSONLineSequence<Base: AsyncSequence, Value: Decodable>: AsyncSequence where Base.Element == ByteBuffer {
    public typealias Element = Value

    let base: Base
    let decoder: JSONDecoder
    let maximumLineLength: Int

    /// Makes the value sequence of `base`; a line longer than `maximumLineLength` bytes throws.
    public init(
        _ base: Base, of type: Value.Type = Value.self, decoder: JSONDecoder = JSONDecoder(),
        maximumLineLength: Int = ByteBufferLineSequence<Base>.defaultMaximumLineLength
    ) {
        self.base = base
        self.decoder = decoder
        self.maximumLineLength = maximumLineLength
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            base: base.makeAsyncIterator(), decoder: decoder,
            splitter: LineSplitter(terminators: .lineFeed, maximumLineLength: maximumLineLength))
    }

    /// Decodes one line at a time.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let decoder: JSONDecoder
        var splitter: LineSplitter
        var chunk = ByteBuffer()
        var baseEnded = false
        var lineNumber = 0

        /// The next value, or nil after the last line.
        /// - Throws: ``CourierError/Code/invalidJSONLine`` naming the line number,
        ///   ``CourierError/Code/lineTooLong``, or what the base sequence throws.
        public mutating func next() async throws -> Value? {
            while true {
                let decoded: Value??
                if let line = try splitter.nextLine(from: &chunk, { Data($0) }) {
                    decoded = try decode(line)
                } else if baseEnded {
                    return nil
                } else if let next = try await base.next() {
                    chunk = next
                    continue
                } else {
                    baseEnded = true
                    guard let last = splitter.finish({ Data($0) }) else { return nil }
                    decoded = try decode(last)
                }
                if let value = decoded ?? nil { return value }
            }
        }

        /// The line's value, or `.some(nil)` for a blank line.
        private mutating func decode(_ line: Data) throws -> Value?? {
            lineNumber += 1
            if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { return .some(nil) }
            do {
                return .some(try decoder.decode(Value.self, from: line))
            } catch {
                let text = String(decoding: line.prefix(200), as: UTF8.self)
                throw CourierError(
                    .invalidJSONLine,
                    "line \(lineNumber) of the NDJSON body is not a valid \(Value.self): \(error)",
                    offendingInput: text, underlyingError: error)
            }
        }
    }
}

extension JSONLineSequence: Sendable where Base: Sendable {}

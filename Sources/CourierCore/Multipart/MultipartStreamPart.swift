import Foundation
import NIOCore

/// The content of a stream part: how to get its bytes, how many there are, and whether a
/// second read is possible.
///
/// A class because a one-shot stream is truly shared state: every copy of a form, and every
/// reader made from it, must agree that the stream has been used. The lock guards only that.
final class MultipartStreamPart: @unchecked Sendable {
    enum Source {
        /// Makes a fresh input stream for each read: replayable.
        case makeInputStream(@Sendable () throws -> InputStream)
        /// One input stream: readable once.
        case inputStream(InputStream)
        /// Makes a fresh async sequence for each read: replayable.
        case makeChunks(@Sendable () -> BodyChunks)
        /// One async sequence: readable once.
        case chunks(BodyChunks)
    }

    /// What a reader got when it claimed the part.
    enum Claimed {
        case inputStream(InputStream)
        case chunks(BodyChunks)
    }

    let length: Int64
    let label: String
    private let source: Source
    private let lock = NSLock()
    private var consumed = false

    init(length: Int64, label: String, source: Source) {
        self.length = length
        self.label = label
        self.source = source
    }

    var isReplayable: Bool {
        switch source {
        case .makeInputStream, .makeChunks: return true
        case .inputStream, .chunks: return false
        }
    }

    var isAsync: Bool {
        switch source {
        case .makeChunks, .chunks: return true
        case .makeInputStream, .inputStream: return false
        }
    }

    /// Marks a one-shot part as used, before any reading starts, so that a second reader fails at once.
    /// - Throws: ``CourierError`` `.bodyNotReplayable` when it was already used.
    func reserve() throws {
        guard !isReplayable else { return }
        let wasConsumed = lock.withLock { () -> Bool in
            defer { consumed = true }
            return consumed
        }
        if wasConsumed {
            throw CourierError(
                .bodyNotReplayable,
                "the multipart part \(label) is a one-shot stream and was already read once; "
                    + "append it with a closure that makes a fresh stream to read the form again",
                offendingInput: label)
        }
    }

    /// The stream to read; a fresh one for a replayable part. Call ``reserve()`` first.
    /// - Throws: the error of a caller's stream factory, wrapped as ``CourierError`` `.streamReadFailed`.
    func open() throws -> Claimed {
        switch source {
        case .inputStream(let stream): return .inputStream(stream)
        case .chunks(let chunks): return .chunks(chunks)
        case .makeChunks(let make): return .chunks(make())
        case .makeInputStream(let make):
            do {
                return .inputStream(try make())
            } catch let error as CourierError {
                throw error
            } catch {
                throw CourierError(
                    .streamReadFailed, "the stream for multipart part \(label) could not be made: \(error)",
                    offendingInput: label, underlyingError: error)
            }
        }
    }

    func shortError(read: Int64) -> CourierError {
        CourierError(
            .bodyLengthMismatch,
            "the stream for multipart part \(label) ended after \(read) of its \(length) declared bytes",
            offendingInput: label)
    }

    func longError() -> CourierError {
        CourierError(
            .bodyLengthMismatch,
            "the stream for multipart part \(label) yielded more than its \(length) declared bytes",
            offendingInput: label)
    }

    /// Checks that `input`, already read to this part's declared length, has nothing left.
    /// - Throws: ``CourierError`` `.bodyLengthMismatch` when it has more, `.streamReadFailed`
    ///   when the read fails.
    func checkEnded(_ input: InputStream) throws {
        var extra: UInt8 = 0
        let read = input.read(&extra, maxLength: 1)
        if read < 0 { throw readFailedError() }
        if read > 0 { throw longError() }
    }

    func readFailedError() -> CourierError {
        // InputStream.streamError is deliberately not consulted: on Linux, Foundation's getter traps.
        CourierError(
            .streamReadFailed, "the input stream for multipart part \(label) failed while reading",
            offendingInput: label)
    }
}

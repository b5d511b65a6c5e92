import Dispatch
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import Courier

/// A streamed body is handed on no faster than the event loops run what was queued before.
@Suite("PacedChunks: streamed bodies wait for the event loops", .timeLimit(.minutes(1)))
struct PacedChunksTests {
    /// Chunks from an array; `onProduce` runs as each one is produced, with its index.
    struct Chunks: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let chunks: [ByteBuffer]
        let onProduce: @Sendable (Int) -> Void

        struct AsyncIterator: AsyncIteratorProtocol {
            let chunks: [ByteBuffer]
            let onProduce: @Sendable (Int) -> Void
            var index = 0
            mutating func next() async throws -> ByteBuffer? {
                guard index < chunks.count else { return nil }
                defer { index += 1 }
                onProduce(index)
                return chunks[index]
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: chunks, onProduce: onProduce) }
    }

    @Test func pastAWindowTheNextChunkWaitsForWhatTheLoopWasGivenBefore() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // The loop is busy with earlier work (a write, say) until the gate opens; the gate
        // opens as the second chunk is produced, so the work ends at some point after that.
        let gate = DispatchSemaphore(value: 0)
        let done = NIOLockedValueBox(false)
        group.next().execute {
            gate.wait()
            done.withLockedValue { $0 = true }
        }
        let size = PacedChunks<Chunks>.window / 2
        let chunks = (0..<4).map { ByteBuffer(repeating: UInt8($0), count: size) }
        let source = Chunks(chunks: chunks) { index in if index == 1 { gate.signal() } }
        var seen: [(bytes: ByteBuffer, loopDone: Bool)] = []
        for try await chunk in PacedChunks(source, group: group) {
            seen.append((chunk, done.withLockedValue { $0 }))
        }
        #expect(seen.map(\.bytes) == chunks)
        // The third chunk comes a window after the start, so only once the loop had run all it
        // was given before.
        #expect(seen[2].loopDone && seen[3].loopDone)
        try await group.shutdownGracefully()
    }

    @Test func aBodyUnderAWindowPassesWithoutWaiting() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let chunks = (0..<3).map { ByteBuffer(repeating: UInt8($0), count: 1000) }
        var received: [ByteBuffer] = []
        for try await chunk in PacedChunks(Chunks(chunks: chunks) { _ in }, group: group) { received.append(chunk) }
        #expect(received == chunks)
        try await group.shutdownGracefully()
    }
}

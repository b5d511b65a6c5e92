import NIOCore
import NIOPosix

/// A streamed body's chunks, handed to AsyncHTTPClient no faster than its event loops write them.
///
/// AsyncHTTPClient 1.37 asks for a streamed body's next chunk as long as the connection last
/// said it wanted more, and queues each write as a task on the connection's event loop. A
/// producer faster than that loop (bytes already in memory, a generator, a file in the page
/// cache) fills the loop's task queue before the connection's writability catches up: valgrind's
/// massif saw 26 MiB of 64 KiB chunks waiting there, in bursts, during a 1 GiB upload, and peak
/// RSS missed 64 MiB for raw AsyncHTTPClient as well as for Courier.
///
/// After every ``window`` bytes this sequence waits until each loop of the group has run an
/// empty task. A loop runs its tasks in order, so the writes queued before have then reached the
/// channel, whose own writability bounds what is buffered there; at most about ``window`` bytes
/// wait on the loops. The wait costs a round trip per loop per window, about 1% of a loopback
/// upload at 2 MiB.
struct PacedChunks<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer
    /// Bytes handed on between two waits.
    static var window: Int { 2 << 20 }

    let base: Base
    let loops: [any EventLoop]

    init(_ base: Base, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.base = base
        self.loops = Array(group.makeIterator())
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), loops: loops)
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let loops: [any EventLoop]
        var sinceWait = 0

        mutating func next() async throws -> ByteBuffer? {
            if sinceWait >= PacedChunks.window {
                sinceWait = 0
                for loop in loops { try await loop.submit {}.get() }
            }
            guard let chunk = try await base.next() else { return nil }
            sinceWait += chunk.readableBytes
            return chunk
        }
    }
}

import Courier
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("Transport: freed wide blocks kept for the next wide buffer")
struct SpareBlocksTests {
    @Test("blocks are kept up to the byte limit and handed out by exact size, the last kept first")
    func keepAndTake() throws {
        let spares = SpareBlocks(byteLimit: 3000)
        let blocks = try (0..<4).map { _ in try #require(malloc(1000)) }
        #expect(spares.keep(blocks[0], byteCount: 1000))
        #expect(spares.keep(blocks[1], byteCount: 1000))
        #expect(spares.keep(blocks[2], byteCount: 1000))
        #expect(!spares.keep(blocks[3], byteCount: 1000))  // past the limit: the caller frees it
        free(blocks[3])
        #expect(spares.count == 3)
        #expect(spares.take(byteCount: 999) == nil)
        #expect(spares.take(byteCount: 1000) == blocks[2])
        #expect(spares.count == 2)
        spares.release()
        #expect(spares.count == 0)
        #expect(spares.take(byteCount: 1000) == nil)
    }

    @Test("a freed wide buffer comes back for the next one of its size, mid-page; a small one is freed")
    func reusedByTheAllocator() throws {
        let spares = SpareBlocks(byteLimit: 4 * MidPageBuffers.blockSize(for: 1 << 20))
        let wide = try #require(MidPageBuffers.allocate(1 << 20, spares: spares))
        MidPageBuffers.deallocate(wide, spares: spares)
        #expect(spares.count == 1)
        let again = try #require(MidPageBuffers.allocate(1 << 20, spares: spares))
        #expect(again == wide)
        #expect(UInt(bitPattern: again) % 4096 == 2048)
        #expect(spares.count == 0)
        let other = try #require(MidPageBuffers.allocate(1 << 19, spares: spares))  // another size: a new block
        #expect(other != wide)
        let small = try #require(MidPageBuffers.allocate(100, spares: spares))
        MidPageBuffers.deallocate(small, spares: spares)
        #expect(spares.count == 0)
        MidPageBuffers.deallocate(again, spares: spares)
        MidPageBuffers.deallocate(other, spares: spares)
        #expect(spares.count == 2)
        spares.release()
    }
}

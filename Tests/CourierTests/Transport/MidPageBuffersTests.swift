import Courier
import NIOCore
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

@Suite("Transport: wide read buffers start mid-page")
struct MidPageBuffersTests {
    typealias Buffers = MidPageBuffers
    static let wide = Buffers.wideSize

    /// The address of a buffer's first byte, taken by reading through its storage.
    static func address(of buffer: ByteBuffer) -> UInt {
        buffer.withVeryUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
    }

    @Test("a wide buffer starts at the middle of a span wherever its block lies; a small one after the header")
    func offsets() {
        for block in stride(from: UInt(0x10_0000), to: 0x10_0000 + 3 * 4096, by: 16) {
            let offset = Buffers.offset(ofBufferSized: Self.wide, inBlockAt: block)
            #expect((block + UInt(offset)) % 4096 == 2048)
            #expect(offset >= Buffers.header)
            #expect(offset + Self.wide <= Buffers.blockSize(for: Self.wide))
            #expect(offset % 16 == 0)
            #expect(Buffers.offset(ofBufferSized: Self.wide - 1, inBlockAt: block) == Buffers.header)
        }
        #expect(Buffers.blockSize(for: 100) == 100 + Buffers.header)
    }

    @Test(
        "buffers of every size hold their bytes, and wide ones start mid-page",
        arguments: [1, 2048, 64 << 10, 1 << 20])
    func allocate(size: Int) {
        var buffer = Buffers.allocator.buffer(capacity: size)
        buffer.writeBytes((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        #expect(Array(buffer.readableBytesView) == (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let inPage = Self.address(of: buffer) % 4096
        #expect(size >= Self.wide ? inPage == 2048 : inPage % 16 == 0)
    }

    @Test("growing through the wide size keeps every byte and moves the buffer mid-page")
    func grow() {
        var buffer = Buffers.allocator.buffer(capacity: 16)
        var expected: [UInt8] = []
        // Small to small, small to wide, wide to wider: each growth is a reallocation.
        for round in 0..<21 {
            let piece = [UInt8](repeating: UInt8(round), count: 1 << round)
            buffer.writeBytes(piece)
            expected += piece
            #expect(buffer.readableBytes == expected.count)
            if buffer.capacity >= Self.wide { #expect(Self.address(of: buffer) % 4096 == 2048) }
        }
        #expect(Array(buffer.readableBytesView) == expected)
    }

    @Test("a shrinking reallocation keeps the bytes that still fit")
    func shrink() throws {
        let bytes = (0..<Self.wide).map { UInt8(truncatingIfNeeded: $0 % 251) }
        let block = try #require(Buffers.allocate(Self.wide))
        block.copyMemory(from: bytes, byteCount: Self.wide)
        let smaller = try #require(Buffers.reallocate(block, from: Self.wide, to: 100))
        #expect(Array(UnsafeRawBufferPointer(start: smaller, count: 100)) == Array(bytes.prefix(100)))
        let larger = try #require(Buffers.reallocate(smaller, from: 100, to: 4 * Self.wide))
        #expect(Array(UnsafeRawBufferPointer(start: larger, count: 100)) == Array(bytes.prefix(100)))
        #expect(UInt(bitPattern: larger) % 4096 == 2048)
        Buffers.deallocate(larger)
    }

    @Test("a buffer from nothing reallocates as a fresh allocation")
    func reallocateNothing() throws {
        let buffer = try #require(Buffers.reallocate(nil, from: 0, to: Self.wide))
        #expect(UInt(bitPattern: buffer) % 4096 == 2048)
        Buffers.deallocate(buffer)
    }

    @Test("a plain HTTP/1.1 connection reads a large body into mid-page buffers", .timeLimit(.minutes(1)))
    func connectionsUseTheAllocator() async throws {
        try await StreamTests.withStreaming { server, manager in
            let response = try await manager.stream(Request(url: server.url("/bytes/\(16 << 20)")))
            var total = 0
            var startsInPage: Set<UInt> = []
            for try await part in response.body {
                total += part.readableBytes
                // A part that filled a wide read starts where its read buffer starts.
                if part.readableBytes >= Self.wide { startsInPage.insert(Self.address(of: part) % 4096) }
            }
            #expect(total == 16 << 20)
            #expect(startsInPage.contains(2048), "wide parts started at \(startsInPage.sorted())")
        }
    }
}

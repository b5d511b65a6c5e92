import NIOCore
import NIOEmbedded
import Testing

@testable import CourierAsyncHTTPClient

/// `HTTP2ConnectionGuard.Front` hands NIOHTTP2 the server's bytes cut at frame ends, so that
/// NIOHTTP2's frame decoder parses each read to its end and starts its buffer over: where the
/// cuts fall, that no byte is lost or reordered, and that a guard which joined in the middle of
/// a frame passes reads on as they came.
@Suite("HTTP/2 reads cut at frame ends")
struct HTTP2ReadCutTests {
    /// What the guard passes on, one buffer per read it fires.
    final class Recorder: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        var chunks: [[UInt8]] = []
        var passed = 0

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            chunks.append(Array(buffer: unwrapInboundIn(data)))
            passed += chunks[chunks.count - 1].count
        }
    }

    static func frame(type: UInt8, stream: UInt32, length: Int, fill: UInt8 = 0) -> [UInt8] {
        let header: [UInt8] = [
            UInt8(length >> 16), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF), type, 0,
            UInt8(stream >> 24), UInt8((stream >> 16) & 0xFF), UInt8((stream >> 8) & 0xFF), UInt8(stream & 0xFF),
        ]
        return header + [UInt8](repeating: fill, count: length)
    }

    /// SETTINGS, DATA frames of several sizes (empty, short, full), then a PING; and where
    /// each frame ends.
    static func serverBytes() -> (bytes: [UInt8], frameEnds: Set<Int>) {
        var bytes = frame(type: 0x4, stream: 0, length: 0)
        var ends: Set<Int> = [bytes.count]
        for length in [16_384, 100, 0, 5_000, 16_384, 16_384, 7, 12_000, 16_384] {
            bytes += frame(type: 0x0, stream: 1, length: length, fill: 0xAB)
            ends.insert(bytes.count)
        }
        bytes += frame(type: 0x6, stream: 0, length: 8)
        ends.insert(bytes.count)
        return (bytes, ends)
    }

    /// Feeds `bytes` to a guard in reads of `size`; what it passed on, and how many bytes it
    /// had passed on after each read.
    static func feed(_ bytes: [UInt8], inReadsOf size: Int) throws -> (
        chunks: [[UInt8]], reads: [Range<Int>], passedAfterRead: [Int]
    ) {
        let recorder = Recorder()
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        let guardState = HTTP2ConnectionGuard(limit: .max)
        try channel.pipeline.syncOperations.addHandlers([HTTP2ConnectionGuard.Front(guardState), recorder])
        var reads: [Range<Int>] = []
        var passed: [Int] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + size)
            reads.append(start..<end)
            try channel.writeInbound(ByteBuffer(bytes: bytes[start..<end]))
            passed.append(recorder.passed)
            start = end
        }
        return (recorder.chunks, reads, passed)
    }

    @Test(arguments: [9, 1_000, 7_001, 16_393, 40_000, 1 << 20])
    func everyReadIsPassedOnUpToTheLastFrameThatEndsInIt(readSize: Int) throws {
        let (bytes, frameEnds) = Self.serverBytes()
        let (chunks, reads, passed) = try Self.feed(bytes, inReadsOf: readSize)
        #expect(Array(chunks.joined()) == bytes)
        // After each read: up to the last frame that ended in it, or all of it if none did.
        let expected = reads.map { read in
            frameEnds.filter { read.lowerBound < $0 && $0 <= read.upperBound }.max() ?? read.upperBound
        }
        #expect(passed == expected, "read size \(readSize)")
        // The last read ends with a frame: nothing is held back.
        #expect(passed.last == bytes.count)
    }

    @Test func aGuardThatJoinedInTheMiddleOfAFramePassesReadsOnAsTheyCame() throws {
        let (bytes, _) = Self.serverBytes()
        // Joined 20 bytes into the first DATA frame's payload: its next "header" is payload.
        let joined = Array(bytes[29...])
        let (chunks, reads, _) = try Self.feed(joined, inReadsOf: 7_001)
        #expect(chunks.map(\.count) == reads.map(\.count))
        #expect(Array(chunks.joined()) == joined)
    }

    @Test func theScannerReportsWhereTheLastFrameInABufferEnds() {
        let (bytes, frameEnds) = Self.serverBytes()
        var scanner = HTTP2FrameHeaderScanner(maximumFrameLength: 1 << 14)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + 3_000)
            let last = bytes[start..<end].withUnsafeBytes { scanner.scan($0) { _ in } }
            let expected = frameEnds.filter { start < $0 && $0 <= end }.max().map { $0 - start }
            #expect(last == expected)
            start = end
        }
        // A frame longer than the peer may send means the scanner is not at a boundary.
        var strict = HTTP2FrameHeaderScanner(maximumFrameLength: 1 << 14)
        Self.frame(type: 0x0, stream: 1, length: (1 << 14) + 1).withUnsafeBytes { _ = strict.scan($0) { _ in } }
        #expect(strict.isLost)
    }
}

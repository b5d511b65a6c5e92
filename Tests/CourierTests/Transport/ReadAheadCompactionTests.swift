import Courier
import NIOCore
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

/// A part waiting in the read-ahead must not hold a storage many times its size.
@Suite struct ReadAheadCompactionTests {
    /// 512 KiB of numbered bytes, as a buffer of decrypted bytes an HTTP/2 frame is cut from.
    func decryptedBlock() -> ByteBuffer {
        var block = ByteBufferAllocator().buffer(capacity: 512 * 1024)
        block.writeBytes((0..<(512 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        return block
    }

    @Test func aFrameSliceOfALargeBlockIsCopiedIntoItsOwnStorage() throws {
        let block = decryptedBlock()
        let frame = try #require(block.getSlice(at: 100_000, length: 16_384))
        let kept = StreamingResponseDelegate.Machine.compacted(frame)
        #expect(kept == frame)
        #expect(kept.storageCapacity < 2 * 16_384 + 4096)
        #expect(frame.storageCapacity >= 512 * 1024)
    }

    @Test func aPartThatFillsMostOfItsStorageIsKeptAsItIs() throws {
        let whole = decryptedBlock()
        #expect(StreamingResponseDelegate.Machine.compacted(whole).storageCapacity == whole.storageCapacity)
        let half = try #require(decryptedBlock().getSlice(at: 0, length: 300 * 1024))
        let kept = StreamingResponseDelegate.Machine.compacted(half)
        #expect(kept == half)
        #expect(kept.storageCapacity == half.storageCapacity)
    }
}

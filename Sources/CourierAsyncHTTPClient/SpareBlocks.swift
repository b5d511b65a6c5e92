import CourierCore
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Freed wide blocks of ``MidPageBuffers``, kept for the next wide buffer of the same size.
///
/// Why: while a slow consumer (a file being written) holds a connection's pooled read buffers,
/// swift-nio reads into fresh ones and frees them after use. glibc then trims its heap, and the
/// next fresh buffer faults its pages back in, each zeroed by the kernel: a 1 GiB download to disk
/// took 8,000-46,000 page faults, against 5,300-5,600 with blocks kept, and ran at 0.86 GB/s
/// against 1.70 (medians of 8 alternated runs; BENCHMARKS.md, "Where a read buffer starts"). A kept
/// block is already mapped, and already mid-page.
///
/// Blocks are kept, process-wide, while their sizes add up to at most ``byteLimit``; they are
/// matched by exact size, which ByteBuffer's powers of two make the common case.
final class SpareBlocks: Sendable {
    /// The most bytes kept at once.
    let byteLimit: Int
    private struct Waiting {
        /// Address and size of each kept block.
        var blocks: [(address: UInt, byteCount: Int)] = []
        var byteCount = 0
    }
    private let waiting = NIOLockedValueBox(Waiting())

    init(byteLimit: Int) {
        self.byteLimit = byteLimit
    }

    /// How many blocks are kept now.
    var count: Int { waiting.withLockedValue { $0.blocks.count } }

    /// A kept block of exactly `byteCount` bytes, taken out; nil when there is none.
    func take(byteCount: Int) -> UnsafeMutableRawPointer? {
        let address = waiting.withLockedValue { waiting -> UInt? in
            guard let index = waiting.blocks.lastIndex(where: { $0.byteCount == byteCount }) else { return nil }
            waiting.byteCount -= byteCount
            return waiting.blocks.remove(at: index).address
        }
        return address.flatMap { UnsafeMutableRawPointer(bitPattern: $0) }
    }

    /// Keeps `block` for a later ``take(byteCount:)``. Returns false when it would take the kept
    /// bytes past ``byteLimit``: the caller frees it.
    func keep(_ block: UnsafeMutableRawPointer, byteCount: Int) -> Bool {
        waiting.withLockedValue { waiting in
            guard waiting.byteCount + byteCount <= byteLimit else { return false }
            waiting.blocks.append((UInt(bitPattern: block), byteCount))
            waiting.byteCount += byteCount
            return true
        }
    }

    /// Frees every kept block.
    func release() {
        let blocks = waiting.withLockedValue { waiting in
            defer { waiting = Waiting() }
            return waiting.blocks
        }
        for block in blocks { free(UnsafeMutableRawPointer(bitPattern: block.address)) }
    }
}

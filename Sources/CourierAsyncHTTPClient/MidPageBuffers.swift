import CourierCore
// The only way to choose where a channel's buffers live is swift-nio's custom-allocator SPI
// (present in 2.101.3, the version Package.swift requires). Should it change, this file is the
// one place to follow it; `ByteBufferAllocator()` is the fallback with the old speed.
@_spi(CustomByteBufferAllocator) import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Memory for a connection's buffers in which every wide buffer (``wideSize`` bytes or more, the
/// size a fast body is read into) starts in the middle of a 4 KiB span of addresses.
///
/// Why: the kernel copies a received body into the read buffer, and on this project's x86-64
/// machine (AMD EPYC, BENCHMARKS.md "Where a read buffer starts") that copy ran at half speed when
/// the buffer began near a 4 KiB boundary: where the copy's stores and the next loads share their
/// low twelve address bits, the CPU takes them for the same location and waits (4K aliasing).
/// `malloc` puts a mebibyte either 16 bytes past a page boundary (when it maps one) or wherever its
/// heap happens to be, and swift-nio reuses a channel's first read buffers for the whole body, so a
/// 1 GiB stream ran at 1.8-2.4 or at 4.5 GB/s depending on that first placement. A buffer that
/// starts mid-span keeps clear of the stalls on loopback and behind a server's `sendfile`, both of
/// which hand over data in page-aligned pieces. Elsewhere the placement is harmless: every buffer
/// stays aligned to 16 bytes, and a wide one costs one page more than it asks for.
///
/// Each buffer has ``header`` bytes before it: its block's address (from `malloc`) and the block's
/// size, so that reallocating and freeing find the block again. Freed wide blocks go to a few
/// ``SpareBlocks`` for the next wide buffer of their size (see there why).
enum MidPageBuffers {
    /// The size from which a buffer is placed mid-span: a read of at least this much is the one
    /// whose copy the placement speeds up.
    static let wideSize = 64 * 1024
    /// The span whose low address bits the CPU compares: 4 KiB on x86-64 whatever the page size.
    static let span = 4096
    /// Where a wide buffer starts within its span.
    static let startInSpan = 2048
    /// Bytes kept before every buffer, for its block's address and size; 16 keeps malloc's alignment.
    static let header = 16
    /// The freed wide blocks the allocator reuses: room for sixteen mebibyte reads, a download's
    /// read-ahead (`TaskOverrides.downloadReadAheadLimit`, 8 MiB) and the reads around it.
    static let spares = SpareBlocks(byteLimit: 16 * blockSize(for: 1 << 20))

    /// The allocator to give a channel (`ChannelOptions.allocator`).
    static let allocator = ByteBufferAllocator(
        allocate: { size in MidPageBuffers.allocate(size) },
        reallocate: { buffer, oldSize, newSize in MidPageBuffers.reallocate(buffer, from: oldSize, to: newSize) },
        deallocate: { buffer in MidPageBuffers.deallocate(buffer) },
        copy: { destination, source, count in destination.copyMemory(from: source, byteCount: count) }
    )

    /// The bytes to ask of `malloc` for a buffer of `size`.
    static func blockSize(for size: Int) -> Int {
        size >= wideSize ? size + header + span : size + header
    }

    /// How far past the start of a block at `blockAddress` a buffer of `size` begins: just past
    /// the header for a small buffer, at ``startInSpan`` of a span for a wide one.
    static func offset(ofBufferSized size: Int, inBlockAt blockAddress: UInt) -> Int {
        guard size >= wideSize else { return header }
        let earliest = blockAddress &+ UInt(header)
        let inSpan = Int(earliest % UInt(span))
        return header + (startInSpan - inSpan + span) % span
    }

    static func allocate(_ size: Int, spares: SpareBlocks = spares) -> UnsafeMutableRawPointer? {
        let bytes = blockSize(for: size)
        let reused = size >= wideSize ? spares.take(byteCount: bytes) : nil
        guard let block = reused ?? malloc(bytes) else { return nil }
        let buffer = block + offset(ofBufferSized: size, inBlockAt: UInt(bitPattern: block))
        note(block, byteCount: bytes, before: buffer)
        return buffer
    }

    /// Grows or shrinks a buffer's block, moving its first `min(oldSize, newSize)` bytes when the
    /// buffer's offset in the block changes. A block that shrinks keeps room for the larger size,
    /// so the bytes to move are always inside it.
    static func reallocate(_ buffer: UnsafeMutableRawPointer?, from oldSize: Int, to newSize: Int)
        -> UnsafeMutableRawPointer?
    {
        guard let buffer else { return allocate(newSize) }
        let oldOffset = buffer - block(of: buffer)
        let largest = max(oldSize, newSize)
        let bytes = blockSize(for: largest)
        guard let moved = realloc(block(of: buffer), bytes) else { return nil }
        let newOffset = offset(ofBufferSized: largest, inBlockAt: UInt(bitPattern: moved))
        // Moved before the block is noted: the note may fall inside the bytes to move.
        if newOffset != oldOffset {
            memmove(moved + newOffset, moved + oldOffset, min(oldSize, newSize))
        }
        note(moved, byteCount: bytes, before: moved + newOffset)
        return moved + newOffset
    }

    static func deallocate(_ buffer: UnsafeMutableRawPointer, spares: SpareBlocks = spares) {
        let block = block(of: buffer)
        let bytes = byteCount(of: buffer)
        if bytes >= blockSize(for: wideSize), spares.keep(block, byteCount: bytes) { return }
        free(block)
    }

    /// Writes the header: the block's size in the first 8 bytes, its address in the last 8.
    private static func note(_ block: UnsafeMutableRawPointer, byteCount: Int, before buffer: UnsafeMutableRawPointer) {
        (buffer - 16).storeBytes(of: byteCount, as: Int.self)
        (buffer - 8).storeBytes(of: block, as: UnsafeMutableRawPointer.self)
    }

    private static func block(of buffer: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        (buffer - 8).load(as: UnsafeMutableRawPointer.self)
    }

    private static func byteCount(of buffer: UnsafeMutableRawPointer) -> Int {
        (buffer - 16).load(as: Int.self)
    }
}

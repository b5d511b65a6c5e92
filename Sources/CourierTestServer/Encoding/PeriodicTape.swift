import NIOConcurrencyHelpers
import NIOCore

/// Generated response content that repeats with a fixed period, held once and served as
/// shared slices, so `/bytes/{n}` and `/range/{n}` stream any length without allocating per chunk.
///
/// The tape stores two periods back to back: a window of up to one period starting at any
/// offset is then contiguous.
struct PeriodicTape: Sendable {
    /// Bytes after which the content repeats; prime for the seeded tape, so no power-of-two
    /// chunking of a transfer lines up with it and a misplaced chunk changes the digest.
    let period: Int
    private let doubled: ByteBuffer

    init(period: [UInt8]) {
        self.period = period.count
        var buffer = ByteBufferAllocator().buffer(capacity: period.count * 2)
        buffer.writeBytes(period)
        buffer.writeBytes(period)
        doubled = buffer
    }

    /// Up to `maximumLength` bytes (at most one period) of the content starting at absolute `offset`.
    func slice(at offset: Int, maximumLength: Int) -> ByteBuffer {
        let start = offset % period
        let length = Swift.min(maximumLength, period)
        return doubled.getSlice(at: doubled.readerIndex + start, length: length) ?? ByteBuffer()
    }

    /// `count` bytes starting at absolute `offset`, copied into one array (for small bodies and tests).
    func bytes(at offset: Int, count: Int) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(count)
        var position = offset
        while result.count < count {
            let piece = slice(at: position, maximumLength: count - result.count)
            result.append(contentsOf: piece.readableBytesView)
            position += piece.readableBytes
        }
        return result
    }

    /// The `/range/{n}` content, as httpbin serves it: `abc…xyz` repeated.
    static let alphabet = PeriodicTape(period: Array((0..<(26 * 2521)).map { UInt8(ascii: "a") + UInt8($0 % 26) }))

    /// The seeded pseudo-random content of `/bytes/{n}?seed=` and `/stream-bytes/{n}?seed=`;
    /// recent seeds are cached, so repeated downloads do not regenerate the period.
    static func seeded(_ seed: UInt64) -> PeriodicTape {
        if let cached = seededCache.withLockedValue({ $0[seed] }) { return cached }
        let tape = generateSeeded(seed)
        seededCache.withLockedValue { cache in
            if cache.count >= 16 { cache.removeAll() }
            cache[seed] = tape
        }
        return tape
    }

    private static let seededCache = NIOLockedValueBox<[UInt64: PeriodicTape]>([:])

    private static func generateSeeded(_ seed: UInt64) -> PeriodicTape {
        var generator = SplitMix64(seed: seed)
        var period = [UInt8](repeating: 0, count: seededPeriod)
        var index = 0
        while index < seededPeriod {
            var word = generator.next()
            for _ in 0..<8 where index < seededPeriod {
                period[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return PeriodicTape(period: period)
    }

    /// 65,537 bytes, a prime.
    static let seededPeriod = 65_537
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, well-mixed, seedable generator, so the same
/// seed gives the same bytes on every platform and in every run.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Starts the sequence at `seed`.
    package init(seed: UInt64) { state = seed }

    /// The next 64 pseudo-random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

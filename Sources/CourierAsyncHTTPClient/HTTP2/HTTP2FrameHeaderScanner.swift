import CourierCore

/// Finds the frame headers in a stream of HTTP/2 bytes however the stream is split into
/// writes, without copying payloads: it reads the nine header bytes (RFC 9113 §4.1) and the
/// first eight payload bytes of each frame, and skips the rest.
///
/// It must start at a frame boundary. ``HTTP2ConnectionGuard`` scans what the client writes,
/// which NIOHTTP2 hands down a whole frame (or a header and then its payload) at a time, and
/// what the server sends, to cut it at frame ends; a header no peer would send tells it that
/// it did not start at a boundary, and it stops (``isLost``).
struct HTTP2FrameHeaderScanner {
    /// A frame's header, with up to eight bytes of its payload (the GOAWAY's error code lies
    /// in bytes 4-7), held as a number so that no frame costs an allocation.
    struct Frame: Equatable {
        var length: Int
        var type: UInt8
        var flags: UInt8
        var streamID: UInt32
        /// The payload's first ``prefixLength`` bytes, big-endian.
        var payloadPrefix: UInt64
        var prefixLength: Int

        static let dataType: UInt8 = 0x0
        static let goAwayType: UInt8 = 0x7
        static let resetStreamType: UInt8 = 0x3

        /// The GOAWAY's error code; nil for other frames or a truncated payload.
        var goAwayErrorCode: UInt32? {
            guard type == Self.goAwayType, prefixLength == 8 else { return nil }
            return UInt32(truncatingIfNeeded: payloadPrefix)
        }
    }

    private static let headerLength = 9
    private static let prefixLength = 8

    /// The header bytes, then the payload prefix, of the frame being read; reused, never
    /// shared, so appending to it allocates nothing after the first frame.
    private var pending: [UInt8] = []
    /// The frame whose prefix is being gathered.
    private var current: Frame?
    /// Payload bytes of the current frame still to skip, after its prefix.
    private var skipping = 0
    /// True once bytes arrived that the scanner cannot read (a file region where a header was
    /// due, or a header no peer would send); it then reports nothing more.
    private(set) var isLost = false
    /// The longest frame a header may announce before the scanner calls itself lost.
    private let maximumFrameLength: Int

    /// `maximumFrameLength` is the longest frame the peer may send; a longer one, like any
    /// header no peer would send, means the scanner did not start at a frame boundary.
    init(maximumFrameLength: Int = 1 << 24) {
        self.maximumFrameLength = maximumFrameLength
        pending.reserveCapacity(Self.headerLength + Self.prefixLength)
    }

    /// Scans `bytes`, calling `onFrame` for each frame whose header and prefix are complete;
    /// returns how many of the bytes the last frame that ends in them takes up to its end,
    /// nil when no frame ends in them or the scanner is lost.
    @discardableResult
    mutating func scan(_ bytes: UnsafeRawBufferPointer, onFrame: (Frame) -> Void) -> Int? {
        var index = 0
        var lastEnd: Int?
        while index < bytes.count, !isLost {
            if skipping > 0 {
                let step = min(skipping, bytes.count - index)
                skipping -= step
                index += step
            } else {
                pending.append(bytes[index])
                index += 1
                advance(onFrame: onFrame)
            }
            if skipping == 0, current == nil, pending.isEmpty { lastEnd = index }
        }
        return isLost ? nil : lastEnd
    }

    /// Skips `count` bytes that cannot be read (a file region's); they must lie in a payload.
    mutating func skip(_ count: Int, onFrame: (Frame) -> Void) {
        guard count > 0, !isLost else { return }
        if current != nil, pending.count < (current?.length ?? 0) {
            // Bytes of a prefix arrive as a file region: the prefix stays short.
            finishFrame(payloadSeen: pending.count, extra: count, onFrame: onFrame)
            return
        }
        guard skipping >= count else {
            isLost = true
            return
        }
        skipping -= count
    }

    private mutating func advance(onFrame: (Frame) -> Void) {
        if current == nil {
            guard pending.count == Self.headerLength else { return }
            let length = Int(pending[0]) << 16 | Int(pending[1]) << 8 | Int(pending[2])
            let streamID = pending[5...8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard length <= maximumFrameLength, Self.isPlausible(type: pending[3], streamID: streamID) else {
                isLost = true
                return
            }
            current = Frame(
                length: length, type: pending[3], flags: pending[4], streamID: streamID & 0x7FFF_FFFF, payloadPrefix: 0,
                prefixLength: 0)
            pending.removeAll(keepingCapacity: true)
        }
        guard let frame = current else { return }
        let wanted = min(frame.length, Self.prefixLength)
        if pending.count >= wanted {
            finishFrame(payloadSeen: pending.count, extra: 0, onFrame: onFrame)
        }
    }

    /// False for a header RFC 9113 forbids: the reserved bit set, a stream's frame (DATA,
    /// HEADERS, PRIORITY, RST_STREAM, PUSH_PROMISE, CONTINUATION) on stream 0, or a
    /// connection's (SETTINGS, PING, GOAWAY) on a stream. Unknown types pass.
    private static func isPlausible(type: UInt8, streamID: UInt32) -> Bool {
        switch type {
        case _ where streamID & 0x8000_0000 != 0: return false
        case 0x0, 0x1, 0x2, 0x3, 0x5, 0x9: return streamID != 0
        case 0x4, 0x6, 0x7: return streamID == 0
        default: return true
        }
    }

    private mutating func finishFrame(payloadSeen: Int, extra: Int, onFrame: (Frame) -> Void) {
        guard var frame = current else { return }
        frame.payloadPrefix = pending.reduce(0) { $0 << 8 | UInt64($1) }
        frame.prefixLength = pending.count
        current = nil
        pending.removeAll(keepingCapacity: true)
        let remaining = frame.length - payloadSeen - extra
        if remaining < 0 {
            isLost = true
            return
        }
        skipping = remaining
        onFrame(frame)
    }
}

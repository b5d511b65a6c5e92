import CourierCore

/// Finds the frame headers in a stream of HTTP/2 bytes however the stream is split into
/// writes, without copying payloads: it reads the nine header bytes (RFC 9113 §4.1), and a
/// GOAWAY's first eight payload bytes for its error code, and skips the rest.
///
/// It must start at a frame boundary. ``HTTP2ConnectionGuard`` scans what the client writes,
/// which NIOHTTP2 hands down a whole frame (or a header and then its payload) at a time, and
/// what the server sends, to cut it at frame ends; a header no peer would send tells it that
/// it did not start at a boundary, and it stops (``isLost``).
struct HTTP2FrameHeaderScanner {
    /// A frame's header, and a GOAWAY's error code.
    struct Frame: Equatable {
        var length: Int
        var type: UInt8
        var flags: UInt8
        var streamID: UInt32
        /// The GOAWAY's error code (its payload's bytes 4-7); nil for other frames or a
        /// truncated payload.
        var goAwayErrorCode: UInt32?

        static let dataType: UInt8 = 0x0
        static let resetStreamType: UInt8 = 0x3
        static let settingsType: UInt8 = 0x4
        static let goAwayType: UInt8 = 0x7

        /// The frame that `header`, nine bytes or more, announces.
        init(header: UnsafeRawBufferPointer) {
            length = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
            type = header[3]
            flags = header[4]
            streamID = header[5...8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            goAwayErrorCode = header.count < 17 ? nil : header[13...16].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        }
    }

    /// The header bytes, then a GOAWAY's payload prefix, of the frame being read; reused,
    /// never shared, so appending to it allocates nothing after the first frame.
    private var pending: [UInt8] = []
    /// Payload bytes of the last frame still to skip.
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
        pending.reserveCapacity(17)
    }

    /// Scans `bytes`, calling `onFrame` for each frame whose header is complete; returns how
    /// many of the bytes the last frame that ends in them takes up to its end, nil when no
    /// frame ends in them or the scanner is lost.
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
                if pending.count >= 9 { readHeader(onFrame: onFrame) }
            }
            if skipping == 0, pending.isEmpty { lastEnd = index }
        }
        return isLost ? nil : lastEnd
    }

    /// Skips `count` bytes that cannot be read (a file region's); they must lie in a payload.
    mutating func skip(_ count: Int) {
        if count > skipping || (count > 0 && !pending.isEmpty) { isLost = true }
        if !isLost { skipping -= count }
    }

    /// Reports the frame in `pending` once its header, and a GOAWAY's error code, is there.
    private mutating func readHeader(onFrame: (Frame) -> Void) {
        let frame = pending.withUnsafeBytes { Frame(header: $0) }
        if pending.count == 9, frame.length > maximumFrameLength || !Self.isPlausible(frame) {
            isLost = true
            return
        }
        let wanted = frame.type == Frame.goAwayType && frame.length >= 8 ? 17 : 9
        guard pending.count == wanted else { return }
        skipping = frame.length - (wanted - 9)
        pending.removeAll(keepingCapacity: true)
        onFrame(frame)
    }

    /// False for a header RFC 9113 forbids (so a plausible stream ID is a whole one): the reserved bit set, a stream's frame (DATA,
    /// HEADERS, PRIORITY, RST_STREAM, PUSH_PROMISE, CONTINUATION) on stream 0, or a
    /// connection's (SETTINGS, PING, GOAWAY) on a stream. Unknown types pass.
    private static func isPlausible(_ frame: Frame) -> Bool {
        switch frame.type {
        case _ where frame.streamID & 0x8000_0000 != 0: return false
        case 0x0, 0x1, 0x2, 0x3, 0x5, 0x9: return frame.streamID != 0
        case 0x4, 0x6, 0x7: return frame.streamID == 0
        default: return true
        }
    }
}

import CourierCore
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Raises a plain HTTP/1.1 connection's receive low-water mark (`SO_RCVLOWAT`) while a large
/// response body streams in, and drops it again; sits right after the response decoder.
///
/// A reader that sleeps whenever its socket is empty is woken by the sender for the next bytes,
/// and on a loopback or a fast link those wake-ups, not the copying, bound the rate (BENCHMARKS.md,
/// "Why curl outruns a blocking receive loop"). A raised mark lets the event loop sleep until a
/// mebibyte waits, the most one read takes (see `ConnectionLedger.widenReads`). It is raised
/// only while that is safe and worth it:
/// - for a body whose `Content-Length` is known, and never above the body bytes still due, so
///   the last of them always wakes the reader;
/// - once a read brought at least ``fastRead`` bytes: the body arrives faster than the loop wakes;
/// - never while the body stalls: a raised mark that saw no read for one ``stallCheck`` goes back
///   to one byte, which makes the kernel report whatever waits as readable, so a body that slows
///   to a trickle is late by at most two checks, once;
/// - never past the response: back to one byte before its end is passed on, so the connection
///   returns to the pool as it came.
///
/// Installed only where the body's bytes are the bytes on the wire (no TLS) and where lowering
/// the mark is known to wake the reader: Linux 4.18 and later re-check readiness when the mark
/// changes. Measured on the stream row (`BENCH_RUNS=7 bash Benchmarks/run.sh stream`): 1.48× and
/// 1.55× curl with a 1 MiB mark, 1.09–1.26× with 256 KiB, 0.69–0.95× without; downloads to a file
/// (the reader writing each chunk) ran at the same rate with and without it.
final class ReceiveLowWaterMark: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart

    /// The mark while a body streams in fast.
    static let raisedMark = 1 << 20
    /// A body part at least this large shows the data arriving faster than the loop wakes.
    static let fastRead = 64 * 1024
    /// How long a raised mark may go without a read before it is dropped.
    static let stallCheck = TimeAmount.milliseconds(2)

    /// Whether this system honours the mark as the handler needs; false off Linux, where kqueue
    /// is not known to re-check readiness when the mark drops (a stalled body could wait).
    static let isSupported: Bool = {
        #if os(Linux)
            var names = utsname()
            guard uname(&names) == 0 else { return false }
            return kernelReleaseSupportsMarks(
                withUnsafeBytes(of: &names.release) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                })
        #else
            return false
        #endif
    }()

    /// The mark on the socket now; 1 is the kernel's default. A mark the socket refused is not
    /// taken: a raised mark that could not be dropped stays watched, and the next check tries again.
    private(set) var mark = 1
    /// Body bytes still due for the response in progress; nil when its length is not declared.
    private var remaining: Int?
    private var readSinceCheck = false
    private var stallTimer: Scheduled<Void>?
    /// Sets a mark on the channel's socket; false when the socket refuses it. A parameter so that
    /// a test can stand in a socket that refuses, which no real one can be made to do on demand.
    private let setMark: (any Channel, Int) -> Bool

    /// A handler that sets the mark on its channel's socket (`setMark` stands in for that in tests).
    init(
        setMark: @escaping (any Channel, Int) -> Bool = { channel, mark in
            (try? channel.syncOptions?.setOption(ReceiveLowWaterMark.option, value: mark)) != nil
        }
    ) {
        self.setMark = setMark
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):  // an interim 1xx head too
            remaining = Self.declaredLength(of: head)
        case .body(let part):
            var newMark: Int?
            if let due = remaining {
                let left = max(0, due - part.readableBytes)
                remaining = left
                readSinceCheck = true
                if mark > 1 || part.readableBytes >= Self.fastRead { newMark = min(Self.raisedMark, max(1, left)) }
            }
            apply(newMark, context: context)
        case .end:
            remaining = nil
            apply(1, context: context)
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        stallTimer?.cancel()
        stallTimer = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stallTimer?.cancel()
        stallTimer = nil
    }

    /// Sets `newMark` on the socket when it differs, then watches a raised mark for stalls.
    private func apply(_ newMark: Int?, context: ChannelHandlerContext) {
        if let newMark, newMark != mark, setMark(context.channel, newMark) {
            mark = newMark
        }
        guard mark > 1, stallTimer == nil else { return }
        stallTimer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.stallCheck) { [self] in
            stallTimer = nil
            let stalled = !readSinceCheck
            readSinceCheck = false
            apply(stalled ? 1 : nil, context: context)
        }
    }

    #if os(Linux)
        static let option = ChannelOptions.Types.SocketOption(
            level: .socket, name: NIOBSDSocket.Option(rawValue: SO_RCVLOWAT))
    #else
        static let option = ChannelOptions.Types.SocketOption(
            level: .socket, name: NIOBSDSocket.Option(rawValue: 0))
    #endif

    /// The body length a response head declares: exactly one `Content-Length`, no transfer coding.
    static func declaredLength(of head: HTTPResponseHead) -> Int? {
        guard !head.headers.contains(name: "transfer-encoding") else { return nil }
        let values = head.headers["content-length"]
        guard values.count == 1, let length = Int(values[0]), length > 0 else { return nil }
        return length
    }

    /// Whether a Linux release string (`uname -r`) is 4.18 or later, where `setsockopt(SO_RCVLOWAT)`
    /// wakes a reader whose socket holds the new mark's worth already.
    static func kernelReleaseSupportsMarks(_ release: String) -> Bool {
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        guard numbers.count == 2 else { return false }
        return (numbers[0], numbers[1]) >= (4, 18)
    }
}

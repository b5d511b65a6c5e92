import CourierCore
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// When to raise a socket's receive low-water mark (`SO_RCVLOWAT`) for the response coming in,
/// and when to drop it again: decisions only, applied by ``ReceiveLowWaterMark``.
///
/// A reader that sleeps whenever its socket is empty is woken by the sender for the next bytes,
/// and on a loopback or a fast link those wake-ups, not the copying, bound the rate (BENCHMARKS.md,
/// "Why curl outruns a blocking receive loop"). A raised mark lets the event loop sleep until a
/// mebibyte waits, the most one read takes (see `ConnectionLedger.widenReads`). It is raised
/// only while that is safe and worth it:
/// - for a body whose `Content-Length` is known, and never above the body bytes still due, so
///   the last of them always wakes the reader;
/// - once a read brought at least ``fastRead`` bytes: the body arrives faster than the loop wakes;
/// - never while the body stalls: a raised mark that saw no read for one stall check goes back to
///   one byte, which makes the kernel report whatever waits as readable, so a body that slows to
///   a trickle is late by at most two checks, once;
/// - never past the response: back to one byte before its end is passed on, so the connection
///   returns to the pool as it came.
struct LowWaterMarkPolicy: Equatable {
    /// The mark while a body streams in fast.
    static let raisedMark = 1 << 20
    /// A body part at least this large shows the data arriving faster than the loop wakes.
    static let fastRead = 64 * 1024

    /// The mark on the socket now; 1 is the kernel's default.
    private(set) var mark = 1
    /// Body bytes still due for the response in progress; nil when its length is not declared.
    private(set) var remaining: Int?
    /// Whether a body part arrived since the last stall check.
    private(set) var readSinceCheck = false

    /// A response head arrived (an interim 1xx head too): its declared length, or nil.
    mutating func headArrived(declaredLength: Int?) {
        remaining = declaredLength
    }

    /// A body part of `size` bytes arrived. Returns the mark to set, or nil to keep the current one.
    mutating func bodyPartArrived(size: Int) -> Int? {
        guard let due = remaining else { return nil }
        let left = max(0, due - size)
        remaining = left
        readSinceCheck = true
        guard mark > 1 || size >= Self.fastRead else { return nil }
        return change(to: min(Self.raisedMark, max(1, left)))
    }

    /// The response ended. Returns the mark to set (back to 1), or nil when it already is.
    mutating func responseEnded() -> Int? {
        remaining = nil
        return change(to: 1)
    }

    /// Whether a stall check should be scheduled: the mark is raised.
    var needsStallCheck: Bool { mark > 1 }

    /// A stall check fired. Returns the mark to set (1 when no part arrived since the last
    /// check), or nil to keep it; then ``needsStallCheck`` says whether to check again.
    mutating func stallCheckFired() -> Int? {
        defer { readSinceCheck = false }
        guard mark > 1, !readSinceCheck else { return nil }
        return change(to: 1)
    }

    /// Records that the socket refused the mark just decided: it still has `previous`.
    mutating func markWasRefused(keeping previous: Int) {
        mark = previous
    }

    private mutating func change(to newMark: Int) -> Int? {
        guard newMark != mark else { return nil }
        mark = newMark
        return newMark
    }

    /// The body length a response head declares: exactly one `Content-Length`, no transfer coding.
    static func declaredLength(of head: HTTPResponseHead) -> Int? {
        guard !head.headers.contains(name: "transfer-encoding") else { return nil }
        let values = head.headers["content-length"]
        guard values.count == 1, let length = Int(values[0]), length > 0 else { return nil }
        return length
    }
}

/// Applies ``LowWaterMarkPolicy`` to a plain HTTP/1.1 connection: sits right after the response
/// decoder, sets the socket's `SO_RCVLOWAT` as the policy says, and runs its stall checks.
///
/// Installed only where the body's bytes are the bytes on the wire (no TLS) and where lowering
/// the mark is known to wake the reader: Linux 4.18 and later re-check readiness when the mark
/// changes. Measured on the stream row (`BENCH_RUNS=7 bash Benchmarks/run.sh stream`): 1.48× and
/// 1.55× curl with a 1 MiB mark, 1.09–1.26× with 256 KiB, 0.69–0.95× without; downloads to a file
/// (the reader writing each chunk) ran at the same rate with and without it.
final class ReceiveLowWaterMark: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart

    /// How long a raised mark may go without a read before it is dropped.
    static let stallCheck = TimeAmount.milliseconds(2)

    /// Whether this system honours the mark as the policy needs; false off Linux.
    static let isSupported: Bool = {
        #if os(Linux)
            return kernelReleaseSupportsMarks(kernelRelease())
        #else
            // kqueue is not known to re-check readiness when the mark drops: a stalled body could wait.
            return false
        #endif
    }()

    private var policy = LowWaterMarkPolicy()
    private var stallTimer: Scheduled<Void>?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let previous = policy.mark
        switch unwrapInboundIn(data) {
        case .head(let head):
            policy.headArrived(declaredLength: LowWaterMarkPolicy.declaredLength(of: head))
        case .body(let part):
            apply(policy.bodyPartArrived(size: part.readableBytes), previous: previous, context: context)
        case .end:
            apply(policy.responseEnded(), previous: previous, context: context)
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelStallCheck()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelStallCheck()
    }

    /// Sets `newMark` on the socket, if there is one to set; `previous` is the mark it replaces.
    private func apply(_ newMark: Int?, previous: Int, context: ChannelHandlerContext) {
        if let newMark {
            let option = ChannelOptions.Types.SocketOption(level: .socket, name: Self.optionName)
            if (try? context.channel.syncOptions?.setOption(option, value: newMark)) == nil {
                // The socket keeps its mark, and the policy learns so; a raised mark that could
                // not be dropped stays watched, and the next check tries again.
                policy.markWasRefused(keeping: previous)
            }
        }
        if policy.needsStallCheck, stallTimer == nil { scheduleStallCheck(context: context) }
    }

    private func scheduleStallCheck(context: ChannelHandlerContext) {
        stallTimer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.stallCheck) { [self] in
            stallTimer = nil
            let previous = policy.mark
            apply(policy.stallCheckFired(), previous: previous, context: context)
        }
    }

    private func cancelStallCheck() {
        stallTimer?.cancel()
        stallTimer = nil
    }

    #if os(Linux)
        private static let optionName = NIOBSDSocket.Option(rawValue: SO_RCVLOWAT)

        private static func kernelRelease() -> String {
            var names = utsname()
            guard uname(&names) == 0 else { return "" }
            return withUnsafeBytes(of: &names.release) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
        }
    #else
        private static let optionName = NIOBSDSocket.Option(rawValue: 0)
    #endif

    /// Whether a Linux release string (`uname -r`) is 4.18 or later, where `setsockopt(SO_RCVLOWAT)`
    /// wakes a reader whose socket holds the new mark's worth already.
    static func kernelReleaseSupportsMarks(_ release: String) -> Bool {
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        guard numbers.count == 2 else { return false }
        return (numbers[0], numbers[1]) >= (4, 18)
    }
}

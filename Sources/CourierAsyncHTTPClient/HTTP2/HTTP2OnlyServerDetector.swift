import NIOCore

/// Recognises, on an HTTP/1.1 connection over TLS, a server that speaks only HTTP/2 and fails
/// the exchange with ``NoCommonProtocol`` instead of a parse error or "the server closed the
/// connection".
///
/// A server that offers ALPN `h2` alone (Apple's push service, gRPC endpoints, some API
/// gateways) may go on with a client that offered only `http/1.1` without choosing a protocol,
/// then speak HTTP/2 anyway: its first bytes are the connection preface's SETTINGS frame, where
/// an HTTP/1.1 response starts with `HTTP/`. The handler looks at the first bytes the server
/// sends and then leaves the pipeline.
final class HTTP2OnlyServerDetector: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private enum Phase {
        /// Nothing read yet; `requestWritten` says whether a request went out.
        case waiting(requestWritten: Bool)
        /// The server's first bytes were HTTP/2: the error waits for a request to go out (an
        /// idle connection that fails is just replaced by the pool).
        case detected
        case failed
    }

    private let mismatch: NoCommonProtocol
    private var phase = Phase.waiting(requestWritten: false)

    init(_ mismatch: NoCommonProtocol) {
        self.mismatch = mismatch
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .waiting(let requestWritten) = phase else { return }
        guard Self.startsWithSettingsFrame(unwrapInboundIn(data)) else {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        phase = .detected
        if requestWritten { fail(context) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        if case .waiting = phase {
            phase = .waiting(requestWritten: true)
        } else if case .detected = phase {
            // Not from within the request handler's own write.
            context.eventLoop.assumeIsolated().execute { [self] in fail(context) }
        }
    }

    private func fail(_ context: ChannelHandlerContext) {
        guard case .detected = phase else { return }
        phase = .failed
        context.fireErrorCaught(mismatch)
        context.close(promise: nil)
    }

    /// Whether `bytes` begin with an HTTP/2 SETTINGS frame header on stream 0 (RFC 9113 §6.5):
    /// a length that is a multiple of 6, type 4, flags 0 (the preface's is no ACK).
    static func startsWithSettingsFrame(_ bytes: ByteBuffer) -> Bool {
        guard bytes.readableBytes >= 9 else { return false }
        let frame = bytes.withUnsafeReadableBytes { HTTP2FrameHeaderScanner.Frame(header: $0) }
        return frame.type == HTTP2FrameHeaderScanner.Frame.settingsType && frame.flags == 0 && frame.streamID == 0
            && frame.length % 6 == 0
    }
}

/// The server speaks only HTTP/2 and the client offered only HTTP/1.1 (ALPN); the transport
/// reports it as `CourierError.Code.connectionFailed`, naming both sides' protocols.
struct NoCommonProtocol: Error, Hashable, CustomStringConvertible {
    /// The ALPN names the client offered.
    let offered: [String]
    /// The setting that lets the request offer HTTP/2.
    let remedy: String

    var description: String {
        "the server speaks only HTTP/2 (ALPN h2: it answered with an HTTP/2 SETTINGS frame), and the request offered \(offered.joined(separator: ", "))"
    }
}

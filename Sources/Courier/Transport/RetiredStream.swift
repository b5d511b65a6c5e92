import NIOHTTP2

/// An HTTP/2 stream that the server closed because it retired the connection or turned the
/// stream away, and whose request can therefore go out again on another connection.
///
/// Servers retire HTTP/2 connections all the time (nginx after `keepalive_requests` streams,
/// load balancers on deploys): they send GOAWAY naming the last stream they will process, and
/// every stream above it is closed unprocessed (RFC 9113 §6.8), which swift-nio-http2 reports
/// as a stream closed with `CANCEL`. A server that cannot take a stream now resets it with
/// `REFUSED_STREAM`, which promises that nothing of it was processed (RFC 9113 §8.7).
///
/// The two are resent differently, because a `CANCEL` can also come from a server that gave up
/// on a stream it had started to process: a refused stream is resent whatever its method, a
/// cancelled one only when its method is idempotent (RFC 9110 §9.2.2). Both need a replayable
/// body, and are resent at most ``maximumResends`` times per exchange, so a server that refuses
/// everything ends in its own error rather than a loop.
enum RetiredStream: Equatable {
    /// Reset with `REFUSED_STREAM`: never processed.
    case refused
    /// Closed with `CANCEL`, as streams above a GOAWAY's last-stream-id are.
    case cancelled

    /// How many times one exchange is sent again after its stream was retired.
    static let maximumResends = 4

    /// The retirement `error` reports, or nil for any other failure.
    init?(_ error: any Error) {
        guard let closed = error as? NIOHTTP2Errors.StreamClosed else { return nil }
        switch closed.errorCode {
        case .refusedStream: self = .refused
        case .cancel: self = .cancelled
        default: return nil
        }
    }

    /// Whether a request with `method` may go out again after this retirement.
    func allowsResend(of method: HTTPMethod) -> Bool {
        switch self {
        case .refused: return true
        case .cancelled: return method.isIdempotent
        }
    }
}

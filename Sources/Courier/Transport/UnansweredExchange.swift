import AsyncHTTPClient
import NIOCore
import NIOHTTP2

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exchange that failed before its response head arrived in a way that says the request can
/// go out again on another connection: the server never processed it, or the connection it rode
/// was being retired.
///
/// Servers retire connections all the time: nginx after `keepalive_requests` requests, load
/// balancers on deploys, any server after an idle timeout. Over HTTP/2 the server sends GOAWAY
/// naming the last stream it will process, and every stream above it is closed unprocessed
/// (RFC 9113 §6.8), which swift-nio-http2 reports as a stream closed with `CANCEL`; a server
/// that cannot take a stream now resets it with `REFUSED_STREAM`, which promises that nothing of
/// it was processed (RFC 9113 §8.7). Over HTTP/1.1 a pooled connection may turn out to be closed
/// when the request is written to it. And a connection can close before the head because the
/// client closed it after a GOAWAY (AsyncHTTPClient 1.37 does so with a response still due when
/// the GOAWAY lands on a fresh connection's first stream) or because the server did.
///
/// What was never sent or never processed goes out again whatever its method. What may have
/// been processed (a `CANCEL`, a close) goes out again only when its method is idempotent
/// (RFC 9110 §9.2.2), which is every request that rides HTTP/2 (see
/// `AsyncHTTPClientTransport.delegateClient(for:carrying:readIncrementally:)`). Every resend
/// needs a replayable body, and one exchange is sent again at most ``maximumResends`` times
/// after the server may have seen it (once after a closed connection; ``maximumUnsentResends``
/// times when nothing was written), so a server that refuses everything ends in its own error
/// rather than a loop.
enum UnansweredExchange: Equatable {
    /// Nothing was written: a pooled connection found closed (`ioOnClosedChannel`), or a request
    /// handed to an HTTP/2 connection that a GOAWAY was closing, which AsyncHTTPClient fails as
    /// `cancelled` before it makes a stream.
    case unsent
    /// Reset with `REFUSED_STREAM`: never processed.
    case refused
    /// Closed with `CANCEL`, as streams above a GOAWAY's last-stream-id are.
    case cancelled
    /// The connection closed, or was reset, before the response head arrived.
    case connectionClosed

    /// How many times one exchange is sent again after the server may have seen it (a refused
    /// or cancelled stream, a closed connection).
    static let maximumResends = 4
    /// How many times one exchange is sent again after nothing of it was written: this costs
    /// the server nothing, and under heavy retirement the pool can hand a request to a closing
    /// connection several times in a row.
    static let maximumUnsentResends = 16
    /// How many of ``maximumResends`` may follow a closed connection: one, as curl and Go's
    /// transport retry a request whose connection died, so that a server that closes on a
    /// request (rather than retiring a connection) sees it twice, not five times.
    static let maximumResendsAfterClose = 1

    /// The wait before the `count`th resend: none for the first, then 1, 2, 4 ms and so on, up to 64 ms.
    static func pause(beforeResend count: Int) -> Duration {
        count <= 1 ? .zero : .milliseconds(1 << min(count - 2, 6))
    }

    /// What `error` says of the exchange, or nil for a failure that must reach the caller.
    /// `cancelledByCourier` tells a `cancelled` that Courier asked for (a caller's cancel, a
    /// deadline, a shutdown) from one that AsyncHTTPClient reports for a closing connection.
    init?(_ error: any Error, cancelledByCourier: Bool) {
        if let error = error as? ChannelError, error == .ioOnClosedChannel {
            self = .unsent
        } else if let error = error as? HTTPClientError {
            // Qualified: a bare `.cancelled` would match `CourierError.Code.cancelled` through
            // CourierError's `~=` and never be true here.
            switch error {
            case HTTPClientError.cancelled where !cancelledByCourier: self = .unsent
            case HTTPClientError.remoteConnectionClosed: self = .connectionClosed
            default: return nil
            }
        } else if let error = error as? IOError, error.errnoCode == ECONNRESET || error.errnoCode == EPIPE {
            // A reset rather than a close: a server that drops an idle keep-alive connection
            // with SO_LINGER 0, or a middlebox that forgot it, as the request arrives. curl and
            // Go's transport send the request once more on a new connection, as after a close.
            self = .connectionClosed
        } else if let closed = error as? NIOHTTP2Errors.StreamClosed {
            switch closed.errorCode {
            case .refusedStream: self = .refused
            case .cancel: self = .cancelled
            default: return nil
            }
        } else {
            return nil
        }
    }

    /// Whether a request with `method` may go out again after this.
    func allowsResend(of method: HTTPMethod) -> Bool {
        switch self {
        case .unsent, .refused: return true
        case .cancelled, .connectionClosed: return method.isIdempotent
        }
    }
}

extension HTTP2ErrorCode {
    /// The code's name in RFC 9113 §7 (`REFUSED_STREAM`), or its number for one the RFC does not name.
    var rfcName: String {
        switch self {
        case .noError: return "NO_ERROR"
        case .protocolError: return "PROTOCOL_ERROR"
        case .internalError: return "INTERNAL_ERROR"
        case .flowControlError: return "FLOW_CONTROL_ERROR"
        case .settingsTimeout: return "SETTINGS_TIMEOUT"
        case .streamClosed: return "STREAM_CLOSED"
        case .frameSizeError: return "FRAME_SIZE_ERROR"
        case .refusedStream: return "REFUSED_STREAM"
        case .cancel: return "CANCEL"
        case .compressionError: return "COMPRESSION_ERROR"
        case .connectError: return "CONNECT_ERROR"
        case .enhanceYourCalm: return "ENHANCE_YOUR_CALM"
        case .inadequateSecurity: return "INADEQUATE_SECURITY"
        case .http11Required: return "HTTP_1_1_REQUIRED"
        default: return "error code \(networkCode)"
        }
    }
}

/// What one exchange may still spend on resends (``UnansweredExchange``'s bounds).
struct ResendBudget {
    /// Resends made so far, of every kind.
    private(set) var spent = 0
    private var afterUnsent = 0
    private var afterClose = 0

    /// Counts a resend for `reason` and returns true, or returns false when its bound is reached.
    mutating func spend(on reason: UnansweredExchange) -> Bool {
        switch reason {
        case .unsent:
            guard afterUnsent < UnansweredExchange.maximumUnsentResends else { return false }
            afterUnsent += 1
        case .connectionClosed:
            guard afterClose < UnansweredExchange.maximumResendsAfterClose,
                spent - afterUnsent < UnansweredExchange.maximumResends
            else { return false }
            afterClose += 1
        case .refused, .cancelled:
            guard spent - afterUnsent < UnansweredExchange.maximumResends else { return false }
        }
        spent += 1
        return true
    }
}

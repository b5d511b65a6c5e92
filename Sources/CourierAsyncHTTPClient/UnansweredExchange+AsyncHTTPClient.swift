import AsyncHTTPClient
import CourierCore
import Foundation
import NIOCore
import NIOHTTP2

extension UnansweredExchange {
    /// What `error`, which ended an exchange before its response head, says of it; nil for a
    /// failure after which the request must not go out again. `cancelledByCourier` tells a
    /// `cancelled` that Courier asked for (a caller's cancel, a deadline, a shutdown) from one
    /// that AsyncHTTPClient reports for a request it handed to a connection a GOAWAY was closing.
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
        } else if error is HTTP2StreamNeverOpened {
            self = .unsent
        } else if error is HTTP2StreamLeftOutByGoAway {
            self = .refused
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
}

extension HTTP2ErrorCode {
    /// The code's name in RFC 9113 §7 (`REFUSED_STREAM`), or its number for one the RFC does not name.
    var rfcName: String {
        Self.rfcNames.indices.contains(networkCode) ? Self.rfcNames[networkCode] : "error code \(networkCode)"
    }

    /// RFC 9113 §7's names, indexed by code (0x0-0xd).
    private static let rfcNames = [
        "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED",
        "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
    ]
}

import CourierCore
import NIOCore
import NIOHTTP1

/// Turns a response whose status code is below 100 into an error before AsyncHTTPClient sees it.
///
/// RFC 9110 §15 gives status codes three digits, 1xx to 5xx; `000`-`099` mean nothing. NIO's
/// parser accepts any three digits, and AsyncHTTPClient 1.37 takes every code below 200 (but
/// 101) for an interim response whose head it drops, then traps on the body and end that follow
/// (`preconditionFailure` in its request state machine, in release builds too): one broken or
/// hostile server would end the client's process. This handler sits between the response
/// decoder and AsyncHTTPClient on every HTTP/1.1 connection (``HTTP2StreamGuard`` does the same
/// in each HTTP/2 stream), fails the exchange with ``InvalidResponseStatus`` instead, drops what
/// else arrives and closes the connection, whose framing is not to be trusted after such a line.
final class ResponseStatusGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart

    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if refused { return }
        if case .head(let head) = unwrapInboundIn(data), head.status.code < 100 {
            refused = true
            context.fireErrorCaught(InvalidResponseStatus(code: Int(head.status.code)))
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(data)
    }
}

/// A response status line whose code is not a valid HTTP status (below 100); the transport
/// reports it as `CourierError.Code.transportFailed` quoting the code.
struct InvalidResponseStatus: Error, Hashable {
    let code: Int
}

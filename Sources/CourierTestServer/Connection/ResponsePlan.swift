import NIOCore
import NIOHTTP1

/// How a connection ends when a fault cuts it.
enum ConnectionEnding {
    /// An orderly close (FIN) after flushing what was written.
    case close
    /// An abortive close: SO_LINGER 0, so the peer sees a TCP reset.
    case reset
}

/// The status line and header fields of a response; framing headers are added by the writer.
struct ResponseHeadSpec {
    var status: HTTPResponseStatus
    var headers: [(name: String, value: String)] = []
    /// Ends the connection after this response even when the client asked for keep-alive.
    var closesConnection = false
}

/// How a streamed body is delimited.
enum BodyFraming {
    case contentLength(Int)
    case chunked
    /// HTTP/1.0 style: the body ends when the connection closes.
    case untilClose
}

/// One step of a streamed body.
enum BodyStep {
    case bytes(ByteBuffer)
    /// Wait before asking for the next step (drip, delay).
    case pause(TimeAmount)
    case end
    /// Stop mid-body and end the connection (a fault).
    case abort(ConnectionEnding)
}

/// A producer of a streamed response body. The connection asks for the next step only while
/// the channel is writable, which keeps memory constant however long the body is.
protocol ResponseBodySource: AnyObject {
    func nextStep() -> BodyStep
}

/// What the server does once a request has been read; endpoints return one of these.
indirect enum ResponsePlan {
    /// A head and a body known in full; Content-Length is added.
    case complete(ResponseHeadSpec, body: ByteBuffer)
    /// A head, then a body pulled from `source`.
    case streamed(ResponseHeadSpec, framing: BodyFraming, source: any ResponseBodySource)
    /// Bytes written verbatim (a malformed response), then the connection ends.
    case raw(ByteBuffer, then: ConnectionEnding)
    /// The plan, after a pause.
    case delayed(TimeAmount, ResponsePlan)
    /// The plan, once the future that `release` makes on the connection's event loop completes
    /// (a long poll: see `/long-poll`).
    case awaiting(_ release: (any EventLoop) -> EventLoopFuture<Void>, ResponsePlan)
    /// Never answer; keep reading and discarding until the peer or the server closes, or until
    /// `closeAfter` has passed (a cap, so a client bug cannot hold a test run forever).
    case stall(closeAfter: TimeAmount)
    /// End the connection without answering.
    case end(ConnectionEnding)
}

extension ResponsePlan {
    /// A JSON body with `Content-Type: application/json`.
    static func json(
        _ value: TestServerJSON, status: HTTPResponseStatus = .ok, headers: [(name: String, value: String)] = []
    ) -> ResponsePlan {
        .bytes(value.serialized(), contentType: "application/json", status: status, headers: headers)
    }

    /// A body of `bytes` with the given type.
    static func bytes(
        _ bytes: some Collection<UInt8>, contentType: String?, status: HTTPResponseStatus = .ok,
        headers: [(name: String, value: String)] = []
    ) -> ResponsePlan {
        var allHeaders = headers
        if let contentType { allHeaders.insert(("Content-Type", contentType), at: 0) }
        return .complete(ResponseHeadSpec(status: status, headers: allHeaders), body: ByteBuffer(bytes: bytes))
    }

    /// A UTF-8 text body.
    static func text(
        _ text: String, contentType: String = "text/plain; charset=utf-8", status: HTTPResponseStatus = .ok,
        headers: [(name: String, value: String)] = []
    ) -> ResponsePlan {
        .bytes(Array(text.utf8), contentType: contentType, status: status, headers: headers)
    }

    /// An empty body.
    static func empty(_ status: HTTPResponseStatus, headers: [(name: String, value: String)] = []) -> ResponsePlan {
        .complete(ResponseHeadSpec(status: status, headers: headers), body: ByteBuffer())
    }

    /// A JSON error document `{"error": message}`.
    static func error(_ status: HTTPResponseStatus, _ message: String) -> ResponsePlan {
        .json(["error": .string(message)], status: status)
    }
}

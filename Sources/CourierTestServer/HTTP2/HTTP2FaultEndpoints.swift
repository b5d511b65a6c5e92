import NIOCore
import NIOHTTP1
import NIOHTTP2

/// HTTP/2-only behaviour a body consumer can ask of its stream, beyond what a ``ResponsePlan``
/// says. The stream handler consults consumers that adopt it; the HTTP/1 server never does.
protocol HTTP2StreamDirectives: AnyObject {
    /// The RST_STREAM code sent when the plan cuts the stream (`.end(.close)`, `.abort(.close)`).
    var resetCode: HTTP2ErrorCode { get }
    /// A GOAWAY to send now, or nil. Asked after the head, after each body chunk and when the
    /// body ends (`requestEnded`); answers at most once.
    func takeGoAway(requestEnded: Bool) -> HTTP2GoAwayRequest?
    /// A flood of raw frames to start on the stream once its head is in, or nil; answers at
    /// most once.
    func takeFlood() -> HTTP2FloodRequest?
}

extension HTTP2StreamDirectives {
    func takeFlood() -> HTTP2FloodRequest? { nil }
    var afterEarlyAnswer: HTTP2EarlyAnswerFollowUp { .reset(.noError) }
}

/// What a stream does once it has sent a whole answer while the request body is still coming.
enum HTTP2EarlyAnswerFollowUp {
    /// RST_STREAM with this code (NO_ERROR: RFC 9113 §8.1's "stop sending, without error").
    case reset(HTTP2ErrorCode)
    /// Reads the rest of the body and discards it: the client's window keeps opening
    /// (WINDOW_UPDATE) and its upload ends normally.
    case read
    /// Stops reading, so that the client's flow-control window runs out and its stream turns
    /// unwritable; then, after `pause`, RST_STREAM with `code` (never, when nil).
    case stall(code: HTTP2ErrorCode?, pause: TimeAmount)
    /// GOAWAY whose last-stream-id leaves this stream out (NIOHTTP2 clients close it).
    case goAway
    /// Closes the whole connection.
    case close
}

/// `/fault/early-answer?…&then=`: the HTTP/1 fault's early answer, followed over HTTP/2 by
/// what `then` names instead of RST_STREAM(NO_ERROR) (see ``FaultEndpoints/earlyAnswer(_:)``).
final class HTTP2EarlyAnswerFault: RequestBodyConsumer, HTTP2StreamDirectives {
    private let inner: any RequestBodyConsumer
    let afterEarlyAnswer: HTTP2EarlyAnswerFollowUp

    init(_ inner: any RequestBodyConsumer, then followUp: HTTP2EarlyAnswerFollowUp) {
        self.inner = inner
        self.afterEarlyAnswer = followUp
    }

    var resetCode: HTTP2ErrorCode { .internalError }
    var answerBeforeBody: ResponsePlan? { inner.answerBeforeBody }
    func consume(_ chunk: ByteBuffer) -> BodyVerdict { inner.consume(chunk) }
    func finish() -> ResponsePlan { inner.finish() }
    func takeGoAway(requestEnded: Bool) -> HTTP2GoAwayRequest? { nil }

    /// The follow-up `then` and `code` name: `reset` (default), `read`, `stall` (reset with
    /// `code` after `pause` ms, default 300), `hold` (stall, never reset), `goaway`, `close`;
    /// nil for anything else.
    static func followUp(then: String, code: String?, pause: Int?) -> HTTP2EarlyAnswerFollowUp? {
        let resetCode = HTTP2FaultEndpoints.errorCode(code ?? "no_error")
        switch then {
        case "reset": return resetCode.map { .reset($0) }
        case "read": return .read
        case "stall": return resetCode.map { .stall(code: $0, pause: .milliseconds(Int64(max(0, pause ?? 300)))) }
        case "hold": return .stall(code: nil, pause: .zero)
        case "goaway": return .goAway
        case "close": return .close
        default: return nil
        }
    }
}

/// A flood a stream asks its connection to send (see ``HTTP2FloodWriter``).
struct HTTP2FloodRequest {
    var flood: HTTP2Flood
    /// Whether the server goes on reading what the client sends meanwhile.
    var readsClient: Bool
}

/// A GOAWAY a stream asks its connection to send.
struct HTTP2GoAwayRequest {
    /// Whether the last-stream-id covers the asking stream ("processed") or stops below it
    /// ("never processed": the stream is dropped unanswered).
    var includesStream: Bool
    var code: HTTP2ErrorCode
}

/// `/fault/h2-…`: faults that only HTTP/2 can express, served by the HTTP/2 stream handler
/// before the ordinary router (over HTTP/1 these paths answer 400).
enum HTTP2FaultEndpoints {
    /// The consumer for an HTTP/2 fault path, or nil when `request` is not one.
    static func route(_ request: ServerRequest) -> (any RequestBodyConsumer)? {
        guard request.segments.count == 2, request.segments[0] == "fault" else { return nil }
        switch request.segments[1] {
        case "h2-reset": return reset(request)
        case "h2-goaway": return goAway(request)
        case "h2-flood": return flood(request)
        default: return nil
        }
    }

    /// `/fault/h2-reset?code=&when=&after=`: RST_STREAM with `code` (a name such as
    /// `refused_stream`, or a number; `internal_error` by default) at the point `when` names:
    /// `before-head` (as soon as the request head is in, nothing read or answered),
    /// `mid-upload` (once `after` request body bytes arrived, default 1, or at the end of a
    /// shorter body), `after-head` (the whole request read, a 200 head sent with
    /// content-length 1000, no body), `mid-body` (the same head with content-length
    /// `after` + 1000, then `after` bytes of `abc…`, default 1000).
    static func reset(_ request: ServerRequest) -> any RequestBodyConsumer {
        guard let code = errorCode(request.queryValue("code") ?? "internal_error") else {
            return DiscardingBody(
                .error(.badRequest, "unknown HTTP/2 error code \((request.queryValue("code") ?? "").debugDescription)"))
        }
        let after = request.queryInt("after")
        switch request.queryValue("when") ?? "before-head" {
        case "before-head": return HTTP2ResetFault(code: code, point: .beforeHead)
        case "mid-upload": return HTTP2ResetFault(code: code, point: .midUpload(afterBytes: max(1, after ?? 1)))
        case "after-head": return HTTP2ResetFault(code: code, point: .midBody(afterBytes: 0))
        case "mid-body": return HTTP2ResetFault(code: code, point: .midBody(afterBytes: max(0, after ?? 1000)))
        case let other:
            return DiscardingBody(
                .error(
                    .badRequest,
                    "when must be before-head, mid-upload, after-head or mid-body, not \(other.debugDescription)"))
        }
    }

    /// `/fault/h2-goaway?last=include|exclude&after=N&code=`: once `after` request body bytes
    /// arrived (0, the default: as soon as the head is in; or at the end of a shorter body) the
    /// connection sends GOAWAY with `code` (`no_error` by default). `last=include` (default)
    /// makes this stream the last-stream-id: it is processed and answered `{"bytes": n}`, then
    /// the connection closes once its streams are done. `last=exclude` puts the last-stream-id
    /// just below it: the stream is never processed (dropped unanswered, as RFC 9113 §6.8
    /// allows) and the connection closes once the streams below are done. With any code other
    /// than `no_error` the connection closes right after the GOAWAY.
    static func goAway(_ request: ServerRequest) -> any RequestBodyConsumer {
        guard let code = errorCode(request.queryValue("code") ?? "no_error") else {
            return DiscardingBody(
                .error(.badRequest, "unknown HTTP/2 error code \((request.queryValue("code") ?? "").debugDescription)"))
        }
        let includes: Bool
        switch request.queryValue("last") ?? "include" {
        case "include": includes = true
        case "exclude": includes = false
        case let other:
            return DiscardingBody(.error(.badRequest, "last must be include or exclude, not \(other.debugDescription)"))
        }
        return HTTP2GoAwayFault(
            request: HTTP2GoAwayRequest(includesStream: includes, code: code),
            afterBytes: max(0, request.queryInt("after") ?? 0))
    }

    /// `/fault/h2-flood?kind=&read=yes|no`: a hostile server. Once the request head is in,
    /// the connection sends raw frames of `kind` (``HTTP2Flood``: `ping`, `settings`,
    /// `empty-data`, `priority`, `window-update`, `reset`, `unknown`, `continuation`,
    /// `trailers`) as fast as the client takes them, for at most 512 MiB or 30 s, and never
    /// answers otherwise. `read=no` stops reading the client, whose acknowledgements then pile
    /// up on its side.
    static func flood(_ request: ServerRequest) -> any RequestBodyConsumer {
        let kind = request.queryValue("kind") ?? "ping"
        guard let flood = HTTP2Flood(rawValue: kind) else {
            let known = HTTP2Flood.allCases.map(\.rawValue).joined(separator: ", ")
            return DiscardingBody(.error(.badRequest, "kind must be one of \(known), not \(kind.debugDescription)"))
        }
        let reads: Bool
        switch request.queryValue("read") ?? "yes" {
        case "yes": reads = true
        case "no": reads = false
        case let other:
            return DiscardingBody(.error(.badRequest, "read must be yes or no, not \(other.debugDescription)"))
        }
        return HTTP2FloodFault(request: HTTP2FloodRequest(flood: flood, readsClient: reads))
    }

    /// The error codes of RFC 9113 §7 by their lower-case names, plus decimal numbers.
    static func errorCode(_ text: String) -> HTTP2ErrorCode? {
        let named: [String: HTTP2ErrorCode] = [
            "no_error": .noError, "protocol_error": .protocolError, "internal_error": .internalError,
            "flow_control_error": .flowControlError, "settings_timeout": .settingsTimeout,
            "stream_closed": .streamClosed,
            "frame_size_error": .frameSizeError, "refused_stream": .refusedStream, "cancel": .cancel,
            "compression_error": .compressionError, "connect_error": .connectError,
            "enhance_your_calm": .enhanceYourCalm,
            "inadequate_security": .inadequateSecurity, "http_1_1_required": .http11Required,
        ]
        if let code = named[text.lowercased()] { return code }
        if let number = UInt32(text) { return HTTP2ErrorCode(networkCode: Int(number)) }
        return nil
    }
}

/// Resets its stream with a chosen code at a chosen point (see ``HTTP2FaultEndpoints/reset(_:)``).
final class HTTP2ResetFault: RequestBodyConsumer, HTTP2StreamDirectives {
    enum Point {
        case beforeHead
        case midUpload(afterBytes: Int)
        /// After the response head and `afterBytes` body bytes (0: right after the head).
        case midBody(afterBytes: Int)
    }

    let resetCode: HTTP2ErrorCode
    private let point: Point
    private var received = 0

    init(code: HTTP2ErrorCode, point: Point) {
        self.resetCode = code
        self.point = point
    }

    var answerBeforeBody: ResponsePlan? {
        if case .beforeHead = point { return .end(.close) }
        return nil
    }

    func consume(_ chunk: ByteBuffer) -> BodyVerdict {
        received += chunk.readableBytes
        if case .midUpload(let limit) = point, received >= limit { return .answerEarly(.end(.close)) }
        return .proceed
    }

    func finish() -> ResponsePlan {
        switch point {
        case .beforeHead, .midUpload:
            return .end(.close)
        case .midBody(let count):
            let source = CutSource(
                inner: TapeSource(tape: .alphabet, offset: 0, count: count, chunkSize: 16 * 1024), ending: .close)
            return .streamed(
                ResponseHeadSpec(status: .ok, headers: [("Content-Type", "application/octet-stream")]),
                framing: .contentLength(count + 1000), source: source)
        }
    }

    func takeGoAway(requestEnded: Bool) -> HTTP2GoAwayRequest? { nil }
}

/// Asks for a GOAWAY mid-upload, then answers `{"bytes": n}` if still processed (see
/// ``HTTP2FaultEndpoints/goAway(_:)``).
final class HTTP2GoAwayFault: RequestBodyConsumer, HTTP2StreamDirectives {
    private let request: HTTP2GoAwayRequest
    private let afterBytes: Int
    private var received = 0
    private var sent = false

    init(request: HTTP2GoAwayRequest, afterBytes: Int) {
        self.request = request
        self.afterBytes = afterBytes
    }

    var resetCode: HTTP2ErrorCode { .internalError }

    func consume(_ chunk: ByteBuffer) -> BodyVerdict {
        received += chunk.readableBytes
        return .proceed
    }

    func finish() -> ResponsePlan { .json(["bytes": .int(Int64(received))]) }

    func takeGoAway(requestEnded: Bool) -> HTTP2GoAwayRequest? {
        guard !sent, requestEnded || received >= afterBytes else { return nil }
        sent = true
        return request
    }
}

/// Asks its connection for a flood and never answers (see ``HTTP2FaultEndpoints/flood(_:)``).
final class HTTP2FloodFault: RequestBodyConsumer, HTTP2StreamDirectives {
    private var request: HTTP2FloodRequest?

    init(request: HTTP2FloodRequest) {
        self.request = request
    }

    var resetCode: HTTP2ErrorCode { .internalError }
    var answerBeforeBody: ResponsePlan? { .stall(closeAfter: HTTP2FloodWriter.timeCap) }
    func consume(_ chunk: ByteBuffer) -> BodyVerdict { .proceed }
    func finish() -> ResponsePlan { .stall(closeAfter: HTTP2FloodWriter.timeCap) }
    func takeGoAway(requestEnded: Bool) -> HTTP2GoAwayRequest? { nil }

    func takeFlood() -> HTTP2FloodRequest? {
        defer { request = nil }
        return request
    }
}

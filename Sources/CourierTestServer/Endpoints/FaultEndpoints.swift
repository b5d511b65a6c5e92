import CourierDigest
import NIOCore
import NIOHTTP1

/// `/fault/…`: responses that break HTTP on purpose, so clients can prove they fail cleanly.
enum FaultEndpoints {
    static func route(_ request: ServerRequest, name: String) -> any RequestBodyConsumer {
        switch name {
        case "close-mid-response": return closeMidResponse(request)
        case "close-after-request-bytes": return closeAfterRequestBytes(request)
        case "wrong-content-length": return wrongContentLength(request)
        case "range": return range(request)
        case "never-answer": return DiscardingBody(.stall(closeAfter: cap(request)))
        case "truncated-chunked": return truncatedChunked(request)
        case "malformed-status": return malformed(request)
        case "huge-headers": return hugeHeaders(request)
        case "reset": return reset(request)
        case "drip-forever": return dripForever(request)
        case "content-disposition": return contentDisposition(request)
        case "flaky": return flaky(request)
        case "early-answer": return earlyAnswer(request)
        case "hold": return hold(request)
        case "release": return release(request)
        case "h2-reset", "h2-goaway":
            return DiscardingBody(
                .error(
                    .badRequest, "/fault/\(name) needs HTTP/2: start the server with tls and http2 and connect with h2")
            )
        default: return DiscardingBody(.error(.notFound, "no fault named \(name.debugDescription)"))
        }
    }

    /// Declares `total` bytes (default after + 1000), sends `after` (default 1000), then closes
    /// (or resets with `?reset=1`). `?etag=1` adds an `ETag` (`"cut-<total>"`), so that a
    /// client keeps what arrived for a resume.
    static func closeMidResponse(_ request: ServerRequest) -> any RequestBodyConsumer {
        let after = max(0, request.queryInt("after") ?? 1000)
        let total = max(after + 1, request.queryInt("total") ?? after + 1000)
        let ending: ConnectionEnding = request.queryValue("reset") == "1" ? .reset : .close
        let source = CutSource(
            inner: TapeSource(tape: .alphabet, offset: 0, count: after, chunkSize: 64 * 1024), ending: ending)
        var headers: [(name: String, value: String)] = [("Content-Type", "application/octet-stream")]
        if request.queryValue("etag") == "1" { headers.append(("ETag", "\"cut-\(total)\"")) }
        return DiscardingBody(
            .streamed(
                ResponseHeadSpec(status: .ok, headers: headers),
                framing: .contentLength(total), source: source))
    }

    /// Closes the connection, without answering, once `n` request body bytes have arrived; a
    /// body shorter than `n` gets `{"bytes": …}`.
    static func closeAfterRequestBytes(_ request: ServerRequest) -> any RequestBodyConsumer {
        let limit = max(0, request.queryInt("n") ?? 0)
        let ending: ConnectionEnding = request.queryValue("reset") == "1" ? .reset : .close
        if limit == 0 { return ImmediateAnswer(.end(ending)) }
        return CloseAfterBytes(limit: limit, ending: ending)
    }

    /// Declares `declared` bytes and sends `actual` (defaults 100 and 50), then closes. The head
    /// says `Connection: close` unless `?close=0`, which invites the client to reuse a connection
    /// that still carries the surplus bytes.
    static func wrongContentLength(_ request: ServerRequest) -> any RequestBodyConsumer {
        let declared = max(0, request.queryInt("declared") ?? 100)
        let actual = max(0, request.queryInt("actual") ?? 50)
        var head = ResponseHeadSpec(status: .ok, headers: [("Content-Type", "application/octet-stream")])
        head.closesConnection = request.queryValue("close") != "0"
        let source = CutSource(
            inner: TapeSource(tape: .alphabet, offset: 0, count: actual, chunkSize: 64 * 1024), ending: .close)
        return DiscardingBody(.streamed(head, framing: .contentLength(declared), source: source))
    }

    /// A range answer that may lie, for `--continue`: `?status=206` (default) says
    /// `Content-Range: bytes <first>-<last>/<length>` (defaults 5, 9, 10; `length=*` unknown)
    /// and sends `sent` bytes (default last - first + 1) framed by `?framing=length` (default, a
    /// matching Content-Length), `chunked` or `close`; `?status=416` says `bytes */<length>`
    /// (none without `length`) and sends nothing.
    static func range(_ request: ServerRequest) -> any RequestBodyConsumer {
        let length = request.queryValue("length")
        if request.queryValue("status") == "416" {
            let field = length.map { "Content-Range: bytes */\($0)\r\n" } ?? ""
            let text = "HTTP/1.1 416 Range Not Satisfiable\r\n\(field)Content-Length: 0\r\nConnection: close\r\n\r\n"
            return DiscardingBody(.raw(ByteBuffer(string: text), then: .close))
        }
        let first = max(0, request.queryInt("first") ?? 5)
        let last = max(first, request.queryInt("last") ?? 9)
        let sent = max(0, min(request.queryInt("sent") ?? last - first + 1, 1 << 20))
        let body = String(repeating: "x", count: sent)
        var text = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes \(first)-\(last)/\(length ?? "10")\r\n"
        switch request.queryValue("framing") ?? "length" {
        case "chunked":
            text += "Transfer-Encoding: chunked\r\n\r\n"
            if sent > 0 { text += String(sent, radix: 16) + "\r\n" + body + "\r\n" }
            text += "0\r\n\r\n"
        case "close": text += "Connection: close\r\n\r\n" + body
        default: text += "Content-Length: \(sent)\r\nConnection: close\r\n\r\n" + body
        }
        return DiscardingBody(.raw(ByteBuffer(string: text), then: .close))
    }

    /// A chunked body of `chunks` chunks (default 3) of `size` bytes (default 100) with no final
    /// zero-size chunk: the connection just closes.
    static func truncatedChunked(_ request: ServerRequest) -> any RequestBodyConsumer {
        let chunks = max(0, min(request.queryInt("chunks") ?? 3, 10_000))
        let size = max(1, min(request.queryInt("size") ?? 100, 64 * 1024))
        let source = CutSource(
            inner: TapeSource(tape: .alphabet, offset: 0, count: chunks * size, chunkSize: size), ending: .close)
        return DiscardingBody(
            .streamed(
                ResponseHeadSpec(status: .ok, headers: [("Content-Type", "application/octet-stream")]),
                framing: .chunked, source: source))
    }

    /// A response the client cannot parse: `?kind=status` (default, a non-numeric status code),
    /// `version` (not HTTP at all), `header` (a header line without a colon), `nul` (a NUL in a header),
    /// or `status-…`: a status code below 100.
    static func malformed(_ request: ServerRequest) -> any RequestBodyConsumer {
        let text: String
        switch request.queryValue("kind") ?? "status" {
        case "version": text = "SPDY/9 200 OK\r\nContent-Length: 2\r\n\r\nok"
        case "header": text = "HTTP/1.1 200 OK\r\nThis line has no colon\r\nContent-Length: 2\r\n\r\nok"
        case "nul": text = "HTTP/1.1 200 OK\r\nX-Bad: a\u{0}b\r\nContent-Length: 2\r\n\r\nok"
        // Status codes below 100, which AsyncHTTPClient 1.37 takes for interim responses and then
        // traps on: with a body, with none, chunked, and before a valid final response.
        case "status-099": text = "HTTP/1.1 099 Weird\r\nContent-Length: 2\r\n\r\nok"
        case "status-000": text = "HTTP/1.1 000 Zero\r\nContent-Length: 0\r\n\r\n"
        case "status-050-chunked": text = "HTTP/1.1 050 Odd\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
        case "status-099-then-200":
            text = "HTTP/1.1 099 Weird\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        default: text = "HTTP/1.1 2x0 Broken\r\nContent-Length: 2\r\n\r\nok"
        }
        return DiscardingBody(.raw(ByteBuffer(string: text), then: .close))
    }

    /// A 200 whose headers total about `size` bytes (default 1 MiB), in `X-Huge-N` fields of up
    /// to 8 KiB each (`?single=1`: one field).
    static func hugeHeaders(_ request: ServerRequest) -> any RequestBodyConsumer {
        let size = max(1, min(request.queryInt("size") ?? 1024 * 1024, 64 * 1024 * 1024))
        let pieceSize = request.queryValue("single") == "1" ? size : 8 * 1024
        var headers: [(name: String, value: String)] = []
        var remaining = size
        var index = 0
        while remaining > 0 {
            let length = min(pieceSize, remaining)
            headers.append(("X-Huge-\(index)", String(repeating: "h", count: length)))
            remaining -= length
            index += 1
        }
        return DiscardingBody(.text("ok", headers: headers))
    }

    /// Resets the connection (SO_LINGER 0) after `after` response bytes (default 0: before any response).
    static func reset(_ request: ServerRequest) -> any RequestBodyConsumer {
        let after = max(0, request.queryInt("after") ?? 0)
        guard after > 0 else { return DiscardingBody(.end(.reset)) }
        let source = CutSource(
            inner: TapeSource(tape: .alphabet, offset: 0, count: after, chunkSize: 64 * 1024), ending: .reset)
        return DiscardingBody(
            .streamed(
                ResponseHeadSpec(status: .ok, headers: [("Content-Type", "application/octet-stream")]),
                framing: .contentLength(after + 1000), source: source))
    }

    /// How long an endless fault lasts before the server closes the connection: `max_ms`
    /// (1 ms to 10 minutes), 30 s by default, so that a client which never gives up cannot hang
    /// a test run.
    static func cap(_ request: ServerRequest) -> TimeAmount {
        .milliseconds(Int64(max(1, min(request.queryInt("max_ms") ?? 30_000, 600_000))))
    }

    /// A chunked body that sends one byte every `interval_ms` (default 100) and never ends;
    /// after `max_ms` (see ``cap(_:)``) the connection is cut without the final chunk.
    static func dripForever(_ request: ServerRequest) -> any RequestBodyConsumer {
        let interval = max(1, min(request.queryInt("interval_ms") ?? 100, 60_000))
        return DiscardingBody(
            .streamed(
                ResponseHeadSpec(status: .ok, headers: [("Content-Type", "application/octet-stream")]),
                framing: .chunked,
                source: EndlessDrip(interval: .milliseconds(Int64(interval)), stopAt: .now() + cap(request))))
    }

    /// A download whose Content-Disposition carries a hostile file name (`../../etc/passwd`
    /// by default). `?form=star` sends it as RFC 8187 `filename*=UTF-8''…`; `?form=bare` unquoted.
    static func contentDisposition(_ request: ServerRequest) -> any RequestBodyConsumer {
        let name = request.queryValue("filename") ?? "../../etc/passwd"
        guard !name.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
            return DiscardingBody(
                .error(
                    .badRequest,
                    "the file name contains CR, LF or NUL, which cannot go in a header: \(name.debugDescription)"))
        }
        let value: String
        switch request.queryValue("form") {
        case "star":
            let encoded = name.utf8.map { byte -> String in
                let isPlain =
                    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                return isPlain ? String(UnicodeScalar(byte)) : "%" + [byte].hexString.uppercased()
            }.joined()
            value = "attachment; filename*=UTF-8''\(encoded)"
        case "bare":
            value = "attachment; filename=\(name)"
        default:
            let escaped = name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            value = "attachment; filename=\"\(escaped)\""
        }
        return DiscardingBody(
            .bytes(
                Array("hostile file name\n".utf8), contentType: "application/octet-stream",
                headers: [("Content-Disposition", value)]))
    }

    /// `/fault/flaky?id=X&failures=2&status=503&mode=status|close|reset`: the first `failures`
    /// requests for `id` fail (with `status`, default 503 and `Retry-After: 0`, or by closing or
    /// resetting the connection); later ones get the echo document plus `attempt`.
    static func flaky(_ request: ServerRequest) -> any RequestBodyConsumer {
        let id = request.queryValue("id") ?? "default"
        let failures = max(0, request.queryInt("failures") ?? 2)
        let status = request.queryInt("status") ?? 503
        let attempt = request.server.nextFlakyAttempt(id: id)
        if attempt <= failures {
            switch request.queryValue("mode") ?? "status" {
            case "close": return DiscardingBody(.end(.close))
            case "reset": return DiscardingBody(.end(.reset))
            default:
                let plan = ResponsePlan.json(
                    ["attempt": .int(Int64(attempt)), "failing": true],
                    status: HTTPResponseStatus(statusCode: status), headers: [("Retry-After", "0")])
                return DiscardingBody(plan)
            }
        }
        return EchoEndpoints.buffered(request) { body in
            var document = EchoEndpoints.document(request, body: body, includeMethod: true)
            if case .object(var members) = document {
                members["attempt"] = .int(Int64(attempt))
                document = .object(members)
            }
            return .json(document)
        }
    }
}

extension FaultEndpoints {
    /// `/fault/early-answer?status=200&after=0`: answers `status` (200 "ok\n", as nginx's
    /// `return 200 "ok\n"`; other codes "<code> <reason>\n") as soon as the head is in, or once
    /// `after` request body bytes arrived, without reading the rest. Over HTTP/1 the connection
    /// closes after the answer; over HTTP/2 the answer is followed by RST_STREAM(NO_ERROR)
    /// while the client is still sending (RFC 9113 §8.1); `then=` picks another follow-up over
    /// HTTP/2 (``HTTP2EarlyAnswerFault/followUp(then:code:pause:)``).
    static func earlyAnswer(_ request: ServerRequest) -> any RequestBodyConsumer {
        let code = request.queryInt("status") ?? 200
        guard (200...599).contains(code) else {
            return DiscardingBody(.error(.badRequest, "status must be 200-599, not \(code)"))
        }
        let status = HTTPResponseStatus(statusCode: code)
        let plan = ResponsePlan.text(code == 200 ? "ok\n" : "\(code) \(status.reasonPhrase)\n", status: status)
        let after = max(0, request.queryInt("after") ?? 0)
        let answer: any RequestBodyConsumer =
            after == 0 ? ImmediateAnswer(plan) : AnswerAfterBytes(limit: after, plan: plan)
        guard let then = request.queryValue("then") else { return answer }
        guard
            let followUp = HTTP2EarlyAnswerFault.followUp(
                then: then, code: request.queryValue("code"), pause: request.queryInt("pause"))
        else {
            return DiscardingBody(
                .error(
                    .badRequest,
                    "then must be reset, read, stall, hold, goaway or close (with a known code), not \(then.debugDescription)"
                ))
        }
        return HTTP2EarlyAnswerFault(answer, then: followUp)
    }
}

/// Answers once `limit` request body bytes have arrived, without waiting for the rest; a body
/// shorter than `limit` gets the same answer at its end.
final class AnswerAfterBytes: RequestBodyConsumer {
    private let limit: Int
    private let plan: ResponsePlan
    private var received = 0

    init(limit: Int, plan: ResponsePlan) {
        self.limit = limit
        self.plan = plan
    }

    func consume(_ chunk: ByteBuffer) -> BodyVerdict {
        received += chunk.readableBytes
        return received >= limit ? .answerEarly(plan) : .proceed
    }

    func finish() -> ResponsePlan { plan }
}

/// Wraps a source and, instead of ending, cuts the connection.
final class CutSource: ResponseBodySource {
    private let inner: any ResponseBodySource
    private let ending: ConnectionEnding

    init(inner: any ResponseBodySource, ending: ConnectionEnding) {
        self.inner = inner
        self.ending = ending
    }

    func nextStep() -> BodyStep {
        switch inner.nextStep() {
        case .end: return .abort(ending)
        case let step: return step
        }
    }
}

/// One byte per interval until `stopAt`, then the connection is closed mid-body.
final class EndlessDrip: ResponseBodySource {
    private let interval: TimeAmount
    private let stopAt: NIODeadline
    private var pauseNext = false

    init(interval: TimeAmount, stopAt: NIODeadline) {
        self.interval = interval
        self.stopAt = stopAt
    }

    func nextStep() -> BodyStep {
        if NIODeadline.now() >= stopAt { return .abort(.close) }
        pauseNext.toggle()
        return pauseNext ? .bytes(ByteBuffer(string: "*")) : .pause(interval)
    }
}

/// Counts request body bytes and cuts the connection once `limit` have arrived.
final class CloseAfterBytes: RequestBodyConsumer {
    private let limit: Int
    private let ending: ConnectionEnding
    private var received = 0

    init(limit: Int, ending: ConnectionEnding) {
        self.limit = limit
        self.ending = ending
    }

    func consume(_ chunk: ByteBuffer) -> BodyVerdict {
        received += chunk.readableBytes
        return received >= limit ? .answerEarly(.end(ending)) : .proceed
    }

    func finish() -> ResponsePlan {
        received >= limit ? .end(ending) : .json(["bytes": .int(Int64(received))])
    }
}

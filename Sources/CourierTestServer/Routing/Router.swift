import NIOCore
import NIOHTTP1

/// Maps a request to the consumer that will read its body and produce its answer.
struct Router: Sendable {
    func route(_ request: ServerRequest) -> any RequestBodyConsumer {
        let segments = request.segments
        let first = segments.first ?? ""
        let second = segments.count > 1 ? segments[1] : nil
        switch (first, segments.count) {
        case ("get", 1): return EchoEndpoints.verb(request, allowed: .GET)
        case ("post", 1): return EchoEndpoints.verb(request, allowed: .POST)
        case ("put", 1): return EchoEndpoints.verb(request, allowed: .PUT)
        case ("patch", 1): return EchoEndpoints.verb(request, allowed: .PATCH)
        case ("delete", 1): return EchoEndpoints.verb(request, allowed: .DELETE)
        case ("anything", _): return EchoEndpoints.anything(request)
        case ("headers", 1): return EchoEndpoints.headers(request)
        case ("ip", 1): return EchoEndpoints.ip(request)
        case ("user-agent", 1): return EchoEndpoints.userAgent(request)
        case ("uuid", 1): return EchoEndpoints.uuid(request)
        case ("delay", 2): return EchoEndpoints.delay(request, seconds: second ?? "")
        case ("long-poll", 1): return EchoEndpoints.longPoll(request)
        case ("status", 2): return RedirectEndpoints.status(request, codes: second ?? "")
        case ("redirect-to", 1): return RedirectEndpoints.redirectTo(request)
        case ("redirect", 2), ("relative-redirect", 2), ("absolute-redirect", 2):
            return RedirectEndpoints.chain(request, kind: first, count: second ?? "")
        case ("bytes", 2): return DownloadEndpoints.bytes(request, length: second ?? "")
        case ("stream-bytes", 2): return DownloadEndpoints.streamBytes(request, length: second ?? "")
        case ("range", 2): return DownloadEndpoints.range(request, length: second ?? "")
        case ("drip", 1): return DownloadEndpoints.drip(request)
        case ("split", 2): return SplitEndpoints.route(request, length: second ?? "")
        case ("sse", 1), ("ndjson", 1), ("gzip-bomb", 1), ("deflate-bomb", 1): return StreamingEndpoints.route(request)
        case ("upload", 1): return UploadSink.route(request)
        case ("fault", 2): return FaultEndpoints.route(request, name: second ?? "")
        case ("auth", 2): return AuthEndpoints.route(request, name: second ?? "")
        case ("cache", _): return CacheEndpoints.route(request)
        case ("files", _): return ResumableUploadEndpoints.route(request)
        default:
            if let consumer = ContentEndpoints.route(request) { return consumer }
            return DiscardingBody(.error(.notFound, "no such endpoint: \(request.path)"))
        }
    }
}

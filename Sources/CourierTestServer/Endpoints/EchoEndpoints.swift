import Foundation
import NIOCore
import NIOHTTP1

/// httpbin's request-echo endpoints: /get, /post, /put, /patch, /delete, /anything, /headers,
/// /ip, /user-agent, /uuid, /delay/{n}.
enum EchoEndpoints {
    /// The methods httpbin's per-verb endpoints accept.
    static func verb(_ request: ServerRequest, allowed: HTTPMethod) -> any RequestBodyConsumer {
        let accepted: Bool = request.method == allowed || (allowed == .GET && request.method == .HEAD)
        guard accepted else { return DiscardingBody(methodNotAllowed(allowing: allowed.rawValue)) }
        if allowed == .GET {
            return DiscardingBody(
                .json([
                    "args": request.argsJSON, "headers": request.headersJSON, "origin": .string(request.remoteIP),
                    "url": .string(request.url),
                ]))
        }
        return buffered(request) { body in .json(document(request, body: body, includeMethod: false)) }
    }

    /// /anything and /anything/{whatever}: every method, with `method` in the document.
    static func anything(_ request: ServerRequest) -> any RequestBodyConsumer {
        buffered(request) { body in .json(document(request, body: body, includeMethod: true)) }
    }

    /// /delay/{n}: the echo document after n seconds (at most 10, as httpbin).
    static func delay(_ request: ServerRequest, seconds text: String) -> any RequestBodyConsumer {
        guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else {
            return DiscardingBody(
                .error(.badRequest, "delay must be a number of seconds, got \(text.debugDescription)"))
        }
        let pause = TimeAmount.nanoseconds(Int64(min(seconds, 10) * 1_000_000_000))
        return buffered(request) { body in .delayed(pause, .json(document(request, body: body, includeMethod: false))) }
    }

    /// `/long-poll?count=N&max_ms=M&id=G`: held until `count` (default 1) requests of group `id`
    /// (default "default") are held at once, or `max_ms` (default 10,000, at most 60,000) after
    /// the group's first; then each gets `{"held": N}`. Many open requests at once, with no
    /// timer per request: the scale benchmark's long poll.
    static func longPoll(_ request: ServerRequest) -> any RequestBodyConsumer {
        let count = max(1, request.queryInt("count") ?? 1)
        let cap = TimeAmount.milliseconds(Int64(min(max(0, request.queryInt("max_ms") ?? 10_000), 60_000)))
        let (server, id) = (request.server, request.queryValue("id") ?? "default")
        return DiscardingBody(
            .awaiting(
                { server.holdLongPoll(id: id, count: count, cap: cap, on: $0) },
                .json(["held": .int(Int64(count))])))
    }

    static func headers(_ request: ServerRequest) -> any RequestBodyConsumer {
        DiscardingBody(.json(["headers": request.headersJSON]))
    }

    static func ip(_ request: ServerRequest) -> any RequestBodyConsumer {
        DiscardingBody(.json(["origin": .string(request.remoteIP)]))
    }

    static func userAgent(_ request: ServerRequest) -> any RequestBodyConsumer {
        DiscardingBody(.json(["user-agent": .optional(request.header("User-Agent"))]))
    }

    static func uuid(_ request: ServerRequest) -> any RequestBodyConsumer {
        DiscardingBody(.json(["uuid": .string(UUID().uuidString.lowercased())]))
    }

    /// Buffers the body (64 MiB cap, 413 beyond) and builds the answer from it.
    static func buffered(_ request: ServerRequest, _ respond: @escaping (ByteBuffer) -> ResponsePlan)
        -> any RequestBodyConsumer
    {
        let declared = request.header("Content-Length").flatMap { Int($0) }
        if let declared, declared > BufferedBody.defaultLimit {
            return ImmediateAnswer(
                .error(
                    .payloadTooLarge,
                    "Content-Length \(declared) exceeds the server's buffering limit of \(BufferedBody.defaultLimit) bytes; use /upload for large bodies"
                ))
        }
        return BufferedBody(expectedLength: declared, respond)
    }

    static func methodNotAllowed(allowing allowed: String) -> ResponsePlan {
        .text("Method Not Allowed\n", status: .methodNotAllowed, headers: [("Allow", allowed)])
    }

    /// httpbin's document: args, data, files, form, headers, json, origin, url (and method).
    static func document(_ request: ServerRequest, body: ByteBuffer, includeMethod: Bool) -> TestServerJSON {
        var members: [String: TestServerJSON] = [
            "args": request.argsJSON, "headers": request.headersJSON, "origin": .string(request.remoteIP),
            "url": .string(request.url),
        ]
        let decoded = DecodedBody(body, contentType: request.header("Content-Type"))
        members["data"] = .string(decoded.data)
        members["form"] = decoded.form
        members["files"] = decoded.files
        members["json"] = decoded.json
        if let error = decoded.error { members["error"] = .string(error) }
        if includeMethod { members["method"] = .string(request.method.rawValue) }
        return .object(members)
    }
}

/// A request body decoded the way httpbin decodes it.
struct DecodedBody {
    var data = ""
    var form: TestServerJSON = .object([:])
    var files: TestServerJSON = .object([:])
    var json: TestServerJSON = .null
    var error: String?

    init(_ body: ByteBuffer, contentType: String?) {
        let bytes = body.readableBytesView
        let mediaType = contentType.map { HeaderParameters(parsing: $0).value.lowercased() } ?? ""
        if mediaType == "application/x-www-form-urlencoded" {
            form = FormURLDecoding.multiDictionary(
                FormURLDecoding.pairs(Substring(String(decoding: bytes, as: UTF8.self))))
        } else if mediaType.hasPrefix("multipart/"), let contentType {
            decodeMultipart(body, contentType: contentType)
        } else {
            data = DecodedBody.text(bytes)
            json = TestServerJSON.parse(bytes) ?? .null
        }
    }

    private mutating func decodeMultipart(_ body: ByteBuffer, contentType: String) {
        guard var parser = MultipartStreamParser(contentType: contentType) else {
            error = "multipart Content-Type without a valid boundary: \(contentType.debugDescription)"
            return
        }
        var formPairs: [(name: String, value: String)] = []
        var filePairs: [(name: String, value: String)] = []
        var current: MultipartPartHead?
        var content: [UInt8] = []
        do {
            try parser.feed(body) { event in
                switch event {
                case .partBegin(let head):
                    current = head
                    content.removeAll(keepingCapacity: true)
                case .bodyChunk(let chunk):
                    content.append(contentsOf: chunk.readableBytesView)
                case .partEnd:
                    guard let head = current else { return }
                    let name = head.name ?? ""
                    if head.filename != nil {
                        filePairs.append((name, DecodedBody.text(content)))
                    } else {
                        formPairs.append((name, String(decoding: content, as: UTF8.self)))
                    }
                    current = nil
                }
            }
            try parser.finish()
        } catch {
            self.error = "malformed multipart body: \(error)"
        }
        form = FormURLDecoding.multiDictionary(formPairs)
        files = FormURLDecoding.multiDictionary(filePairs)
    }

    /// UTF-8 text, or a base64 data URL for bytes that are not UTF-8 (as httpbin).
    static func text(_ bytes: some Collection<UInt8>) -> String {
        if let text = String(data: Data(bytes), encoding: .utf8) { return text }
        return "data:application/octet-stream;base64," + Data(bytes).base64EncodedString()
    }
}

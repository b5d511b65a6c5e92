import CourierDigest
import NIOCore
import NIOHTTP1

/// `/upload` (POST, PUT or PATCH, any size): hashes the body as it streams in and, for multipart
/// bodies, each part's content, holding no more than one chunk and one part header at a time.
///
/// The answer: `bytes`, `sha256` of the whole body, the `content_length`, `transfer_encoding`
/// and `content_type` headers seen (null when absent), `method`, `part_count`, and `parts`
/// (name, filename, content_type, headers, size, sha256 each; `?parts=count` leaves the list
/// out for forms with very many parts; `?digest=none` skips hashing, for throughput runs, and
/// reports `sha256` as null). A multipart body that does not parse is a 400 whose document says
/// why, with the same fields.
final class UploadSink: RequestBodyConsumer {
    private struct PartRecord {
        var head: MultipartPartHead
        var size = 0
        var hasher = SHA256()
    }

    private let request: ServerRequest
    private var hasher = SHA256()
    private var received = 0
    private var parser: MultipartStreamParser?
    private var parseError: String?
    private var current: PartRecord?
    private var finishedParts: [TestServerJSON] = []
    private var partCount = 0
    private let listsParts: Bool
    private let hashes: Bool

    init(_ request: ServerRequest) {
        self.request = request
        listsParts = request.queryValue("parts") != "count"
        hashes = request.queryValue("digest") != "none"
        if let contentType = request.header("Content-Type"),
            HeaderParameters(parsing: contentType).value.lowercased().hasPrefix("multipart/")
        {
            parser = MultipartStreamParser(contentType: contentType)
            if parser == nil {
                parseError = "multipart Content-Type without a valid boundary: \(contentType.debugDescription)"
            }
        }
    }

    static func route(_ request: ServerRequest) -> any RequestBodyConsumer {
        guard [.POST, .PUT, .PATCH].contains(request.method) else {
            return DiscardingBody(EchoEndpoints.methodNotAllowed(allowing: "POST, PUT, PATCH"))
        }
        return UploadSink(request)
    }

    func consume(_ chunk: ByteBuffer) -> BodyVerdict {
        received += chunk.readableBytes
        if hashes { chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) } }
        if var active = parser, parseError == nil {
            parser = nil
            do {
                try active.feed(chunk) { event in handle(event) }
            } catch {
                parseError = "malformed multipart body: \(error)"
            }
            parser = active
        }
        return .proceed
    }

    private func handle(_ event: MultipartEvent) {
        switch event {
        case .partBegin(let head):
            current = PartRecord(head: head)
        case .bodyChunk(let chunk):
            current?.size += chunk.readableBytes
            if hashes { chunk.withUnsafeReadableBytes { current?.hasher.update(bufferPointer: $0) } }
        case .partEnd:
            guard let part = current else { return }
            current = nil
            partCount += 1
            guard listsParts else { return }
            var headers: [String: TestServerJSON] = [:]
            for header in part.head.headers {
                if case .string(let existing) = headers[header.name] {
                    headers[header.name] = .string(existing + "," + header.value)
                } else {
                    headers[header.name] = .string(header.value)
                }
            }
            finishedParts.append([
                "name": .optional(part.head.name), "filename": .optional(part.head.filename),
                "content_type": .optional(part.head.contentType), "headers": .object(headers),
                "size": .int(Int64(part.size)), "sha256": hashes ? .string(part.hasher.finalize().hexString) : .null,
            ])
        }
    }

    func finish() -> ResponsePlan {
        if let parser, parseError == nil {
            do { try parser.finish() } catch { parseError = "malformed multipart body: \(error)" }
        }
        var document: [String: TestServerJSON] = [
            "bytes": .int(Int64(received)), "sha256": hashes ? .string(hasher.finalize().hexString) : .null,
            "content_length": .optional(request.header("Content-Length")),
            "transfer_encoding": .optional(request.header("Transfer-Encoding")),
            "content_type": .optional(request.header("Content-Type")),
            "method": .string(request.method.rawValue),
            "part_count": .int(Int64(partCount)),
        ]
        if listsParts { document["parts"] = .array(finishedParts) }
        if let parseError {
            document["error"] = .string(parseError)
            return .json(.object(document), status: .badRequest)
        }
        return .json(.object(document))
    }
}

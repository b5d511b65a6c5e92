import NIOCore
import NIOHTTP1

/// `/files/`: a tus 1.0 server (core, creation, creation-with-upload, termination) and the IETF
/// draft's upload resources (interop version 8) on the same endpoint, written from the two
/// specifications; a request with `Upload-Draft-Interop-Version` speaks the draft.
///
/// - `OPTIONS /files/`: `Tus-Version`, `Tus-Extension` (`?cwu=0` leaves out
///   `creation-with-upload`), `Accept-Patch: application/partial-upload`.
/// - `POST /files/`: creates an upload of `Upload-Length` bytes, with data when the body is
///   `application/offset+octet-stream` (tus) or any body (the draft, `Upload-Complete`). Faults
///   for that upload come from the creation URL's query: `cut=N` ends a request that carries
///   data after N of its body bytes (closing; `reset=1` resets), `cuts=K` times (default 1);
///   `fail=S` answers the next append with status S once, before its body; `expire=1` makes the
///   upload expire (410) at its first cut, for the first upload created so only (a restarted
///   upload then goes through); `hold=1` never answers the first append once its body is in;
///   `lie=N` reports an offset N bytes too low in the first offset retrieval after a cut, so
///   that the client's next append meets a 409; `limit=N` (the draft) announces
///   `Upload-Limit: max-append-size=N` and answers a longer append with 413. `hash=0` keeps no
///   SHA-256 of the upload (the benchmarks' timed runs: hashing costs more than sending).
/// - `HEAD /files/<id>`: the offset; `PATCH /files/<id>`: appends from `Upload-Offset` (409 with
///   the server's offset when it differs); `DELETE /files/<id>`: forgets it.
/// - `GET /files/<id>`: a JSON report (`offset`, `length`, `complete`, `sha256` of what arrived
///   once the upload is whole and unless created with `hash=0`, `appends`, `cuts`, `metadata`); `GET /files/`: `creations` and
///   `bytes_received` since the server started.
enum ResumableUploadEndpoints {
    static let tusVersion = "1.0.0"
    static let interopVersion = "8"

    static func route(_ request: ServerRequest) -> any RequestBodyConsumer {
        let registry = request.server.resumableUploads
        let segments = request.segments
        guard segments.count <= 2 else { return DiscardingBody(.error(.notFound, "no such upload: \(request.path)")) }
        if request.method == .OPTIONS { return DiscardingBody(options(request)) }
        if request.method == .GET {
            return DiscardingBody(segments.count == 1 ? totals(registry) : report(registry, id: segments[1]))
        }
        let isDraft = request.header("Upload-Draft-Interop-Version") != nil
        if isDraft, request.header("Upload-Draft-Interop-Version") != interopVersion {
            return DiscardingBody(
                .error(
                    .badRequest, "this server speaks interop version \(interopVersion) of the resumable upload draft"))
        }
        if !isDraft, request.header("Tus-Resumable") != tusVersion {
            return DiscardingBody(
                .empty(
                    .preconditionFailed,
                    headers: [("Tus-Version", tusVersion), ("Content-Type", "text/plain")]))
        }
        let context = Context(request: request, registry: registry, isDraft: isDraft)
        if segments.count == 1 {
            guard request.method == .POST || isDraft else {
                return DiscardingBody(EchoEndpoints.methodNotAllowed(allowing: "OPTIONS, POST, GET"))
            }
            return context.create()
        }
        let id = segments[1]
        switch request.method {
        case .HEAD: return DiscardingBody(context.offset(id))
        case .PATCH: return context.append(id)
        case .DELETE:
            registry.remove(id)
            return DiscardingBody(.empty(.noContent, headers: context.protocolHeaders))
        default: return DiscardingBody(EchoEndpoints.methodNotAllowed(allowing: "HEAD, PATCH, DELETE, GET"))
        }
    }

    static func options(_ request: ServerRequest) -> ResponsePlan {
        var extensions = ["creation", "termination"]
        if request.queryValue("cwu") != "0" { extensions.insert("creation-with-upload", at: 1) }
        return .empty(
            .noContent,
            headers: [
                ("Tus-Resumable", tusVersion), ("Tus-Version", tusVersion),
                ("Tus-Extension", extensions.joined(separator: ",")), ("Accept-Patch", "application/partial-upload"),
            ])
    }

    static func totals(_ registry: ResumableUploadRegistry) -> ResponsePlan {
        let totals = registry.totals
        return .json(["creations": .int(Int64(totals.creations)), "bytes_received": .int(totals.bytesReceived)])
    }

    static func report(_ registry: ResumableUploadRegistry, id: String) -> ResponsePlan {
        guard let upload = registry.upload(id) else { return .error(.notFound, "no upload \(id)") }
        let whole = upload.offset == upload.length
        return .json([
            "id": .string(upload.id), "offset": .int(upload.offset), "length": .int(upload.length),
            "complete": .bool(upload.isComplete || (!upload.isDraft && whole)),
            "sha256": whole && upload.hashes ? .string(upload.hasher.finalize().hexString) : .null,
            "appends": .int(Int64(upload.appends)), "cuts": .int(Int64(upload.cuts)),
            "metadata": .optional(upload.metadata), "draft": .bool(upload.isDraft),
        ])
    }

    /// One request's view of the protocol it speaks.
    struct Context {
        let request: ServerRequest
        let registry: ResumableUploadRegistry
        let isDraft: Bool

        var protocolHeaders: [(name: String, value: String)] {
            isDraft ? [] : [("Tus-Resumable", ResumableUploadEndpoints.tusVersion)]
        }

        var appendType: String { isDraft ? "application/partial-upload" : "application/offset+octet-stream" }

        func integer(_ name: String) -> Int64? {
            guard let value = request.header(name), !value.isEmpty, value.allSatisfy(\.isNumber) else { return nil }
            return Int64(value)
        }

        /// The draft's `Upload-Complete`: nil when absent or not a structured boolean.
        var uploadComplete: Bool? {
            switch request.header("Upload-Complete") {
            case "?1": return true
            case "?0": return false
            default: return nil
            }
        }

        func create() -> any RequestBodyConsumer {
            let bodyLength = integer("Content-Length") ?? 0
            let complete = uploadComplete
            if isDraft && complete == nil {
                return DiscardingBody(.error(.badRequest, "a draft upload creation needs Upload-Complete: ?0 or ?1"))
            }
            let length = integer("Upload-Length") ?? (complete == true ? bodyLength : nil)
            guard let length else { return DiscardingBody(.error(.badRequest, "Upload-Length is missing or invalid")) }
            let carriesData = isDraft ? bodyLength > 0 : request.header("Content-Type") == appendType
            if !isDraft && bodyLength > 0 && !carriesData {
                return DiscardingBody(.error(.unsupportedMediaType, "data sent with a creation must be \(appendType)"))
            }
            var faults = ResumableUploadRegistry.Faults()
            faults.cutAfter = request.queryInt("cut")
            faults.cutsLeft = request.queryInt("cuts") ?? 1
            faults.ending = request.queryValue("reset") == "1" ? .reset : .close
            faults.failOnce = request.queryInt("fail")
            faults.expiresAtCut = request.queryValue("expire") == "1" && !registry.hasExpired
            faults.holdsAnswer = request.queryValue("hold") == "1"
            faults.lie = request.queryInt("lie").map(Int64.init)
            faults.appendLimit = isDraft ? request.queryInt("limit").map(Int64.init) : nil
            let id = registry.create(
                length: length, metadata: request.header("Upload-Metadata") ?? request.header("Content-Disposition"),
                isDraft: isDraft, hashes: request.queryValue("hash") != "0", faults: faults)
            let location = request.absoluteURL("/files/\(id)")
            guard carriesData else {
                var headers = protocolHeaders + [("Location", location)]
                if isDraft { headers.append(("Upload-Complete", "?0")) }
                if let limit = faults.appendLimit { headers.append(("Upload-Limit", "max-append-size=\(limit)")) }
                return DiscardingBody(.empty(.created, headers: headers))
            }
            return AppendingBody(id: id, context: self) { upload in
                self.answer(after: upload, completes: complete == true, location: location)
            }
        }

        func offset(_ id: String) -> ResponsePlan {
            guard let upload = registry.upload(id) else { return .error(.notFound, "no upload \(id)") }
            guard !upload.isExpired else { return .error(.gone, "upload \(id) has expired") }
            var reported = upload.offset
            if upload.cuts > 0, let lie = upload.faults.lie {
                registry.update(id) { $0.faults.lie = nil }
                reported = max(0, reported - lie)
            }
            var headers =
                protocolHeaders + [
                    ("Upload-Offset", String(reported)), ("Upload-Length", String(upload.length)),
                    ("Cache-Control", "no-store"),
                ]
            if isDraft { headers.append(("Upload-Complete", upload.isComplete ? "?1" : "?0")) }
            if !isDraft, let metadata = upload.metadata { headers.append(("Upload-Metadata", metadata)) }
            return .empty(isDraft ? .noContent : .ok, headers: headers)
        }

        func append(_ id: String) -> any RequestBodyConsumer {
            guard let upload = registry.upload(id) else { return DiscardingBody(.error(.notFound, "no upload \(id)")) }
            guard !upload.isExpired else { return DiscardingBody(.error(.gone, "upload \(id) has expired")) }
            guard request.header("Content-Type") == appendType else {
                return ImmediateAnswer(.error(.unsupportedMediaType, "an append must be \(appendType)"))
            }
            guard let offset = integer("Upload-Offset") else {
                return ImmediateAnswer(.error(.badRequest, "Upload-Offset is missing or invalid"))
            }
            let complete = uploadComplete
            if isDraft && complete == nil {
                return ImmediateAnswer(.error(.badRequest, "a draft append needs Upload-Complete: ?0 or ?1"))
            }
            guard offset == upload.offset else {
                return ImmediateAnswer(
                    .json(
                        ["error": .string("Upload-Offset \(offset) does not match \(upload.offset)")],
                        status: .conflict, headers: protocolHeaders + [("Upload-Offset", String(upload.offset))]))
            }
            if upload.isComplete {
                return ImmediateAnswer(.error(.badRequest, "upload \(id) is already complete"))
            }
            if let failure = upload.faults.failOnce {
                registry.update(id) { $0.faults.failOnce = nil }
                return ImmediateAnswer(
                    .error(HTTPResponseStatus(statusCode: failure), "a failure asked for when the upload was created"))
            }
            if let bodyLength = integer("Content-Length"), let limit = upload.faults.appendLimit, bodyLength > limit {
                return ImmediateAnswer(
                    .error(.payloadTooLarge, "the append is longer than max-append-size=\(limit)"))
            }
            if let bodyLength = integer("Content-Length"), offset + bodyLength > upload.length {
                return ImmediateAnswer(.error(.badRequest, "the append runs past Upload-Length \(upload.length)"))
            }
            let holds = registry.update(id) { upload -> Bool in
                upload.appends += 1
                defer { upload.faults.holdsAnswer = false }
                return upload.faults.holdsAnswer
            }
            return AppendingBody(id: id, context: self, holdsAnswer: holds == true) { upload in
                self.answer(after: upload, completes: complete == true, location: nil)
            }
        }

        /// The answer once an append's or a creation's body has been taken in.
        func answer(after upload: ResumableUploadRegistry.Upload, completes: Bool, location: String?)
            -> ResponsePlan
        {
            var headers = protocolHeaders
            if let location { headers.append(("Location", location)) }
            headers.append(("Upload-Offset", String(upload.offset)))
            guard isDraft else { return .empty(location == nil ? .noContent : .created, headers: headers) }
            guard completes else {
                headers.append(("Upload-Complete", "?0"))
                return .empty(location == nil ? .noContent : .created, headers: headers)
            }
            guard upload.offset == upload.length else {
                return .error(
                    .badRequest, "Upload-Complete: ?1 at offset \(upload.offset) of \(upload.length) bytes")
            }
            registry.update(upload.id) { $0.isComplete = true }
            headers.append(("Upload-Complete", "?1"))
            return .json(
                [
                    "bytes": .int(upload.offset),
                    "sha256": upload.hashes ? .string(upload.hasher.finalize().hexString) : .null,
                ],
                headers: headers)
        }
    }
}

/// Takes an upload's bytes in as they arrive, so that whatever arrived before a cut or a
/// client's disconnect is kept, as both protocols ask; cuts the request where the upload's
/// faults say.
final class AppendingBody: RequestBodyConsumer {
    private let id: String
    private let registry: ResumableUploadRegistry
    private let respond: (ResumableUploadRegistry.Upload) -> ResponsePlan
    private var received = 0
    private let holdsAnswer: Bool

    init(
        id: String, context: ResumableUploadEndpoints.Context, holdsAnswer: Bool = false,
        respond: @escaping (ResumableUploadRegistry.Upload) -> ResponsePlan
    ) {
        self.holdsAnswer = holdsAnswer
        self.id = id
        self.registry = context.registry
        self.respond = respond
    }

    func consume(_ chunk: ByteBuffer) -> BodyVerdict {
        guard let upload = registry.upload(id) else { return .answerEarly(.end(.close)) }
        let room = upload.length - upload.offset
        var chunk = chunk
        if Int64(chunk.readableBytes) > room {
            return .answerEarly(.error(.badRequest, "the body runs past Upload-Length \(upload.length)"))
        }
        if let cut = upload.faults.cutAfter, upload.faults.cutsLeft > 0, received + chunk.readableBytes >= cut {
            if let kept = chunk.readSlice(length: max(0, cut - received)) { registry.append(id, kept) }
            received = cut
            registry.update(id) { upload in
                upload.faults.cutsLeft -= 1
                upload.cuts += 1
            }
            if upload.faults.expiresAtCut { registry.expire(id) }
            return .answerEarly(.end(upload.faults.ending))
        }
        received += chunk.readableBytes
        registry.append(id, chunk)
        return .proceed
    }

    func finish() -> ResponsePlan {
        guard let upload = registry.upload(id) else { return .error(.notFound, "no upload \(id)") }
        if holdsAnswer { return .stall(closeAfter: .seconds(30)) }
        return respond(upload)
    }
}

import Foundation
import NIOConcurrencyHelpers

/// One run of a resumable upload: a state machine whose every step is one request through the
/// manager, each state holding what it needs (the upload's URL, the offset to send from).
struct ResumableUploader {
    let manager: HTTPSessionManager
    let creationMethod: HTTPMethod
    let endpoint: URL
    let source: ResumableUploadSource
    let options: ResumableUploadOptions
    let policy: RetryPolicy
    let progress: ProgressHandler?

    private enum Phase {
        /// Look for a stored URL.
        case start
        /// Create a new upload resource.
        case create
        /// Send from `offset`, which the server has confirmed.
        case append(url: URL, offset: Int64)
        /// Ask the server for its offset; `stored` when the URL came from the store, not this call.
        case synchronize(url: URL, stored: Bool)
        case finished(URL, DataResponse<Data>)
    }

    /// An exchange's end: an answer with any status, or a failure below HTTP.
    private enum Outcome {
        case answered(DataResponse<Data>)
        case failed(CourierError)
    }

    private var bytesSent: Int64 = 0
    private var creations = 0
    private var recoveries = 0
    private var failuresInRow = 0
    private var confirmed: Int64 = 0
    private var resumedFromOffset: Int64 = 0
    /// The upload this call knows of, for termination on cancel.
    private var currentURL: URL?
    /// The draft's `Upload-Limit: max-append-size`, which no append may exceed once announced.
    private var appendLimit: Int64?

    init(
        manager: HTTPSessionManager, creationMethod: HTTPMethod, endpoint: URL, source: ResumableUploadSource,
        options: ResumableUploadOptions, policy: RetryPolicy, progress: ProgressHandler?
    ) {
        self.manager = manager
        self.creationMethod = creationMethod
        self.endpoint = endpoint
        self.source = source
        self.options = options
        self.policy = policy
        self.progress = progress
    }

    private var uploadProtocol: ResumableUploadProtocol { options.uploadProtocol }

    private var fingerprint: ResumableUploadFingerprint? {
        let name = uploadProtocol.rawValue
        if let file = source.file {
            return ResumableUploadFingerprint(
                path: file.path, size: source.length, modificationTime: file.modificationTime,
                endpoint: endpoint.absoluteString, protocolName: name)
        }
        return options.fingerprintName.map {
            ResumableUploadFingerprint(
                path: $0, size: source.length, modificationTime: 0, endpoint: endpoint.absoluteString,
                protocolName: name)
        }
    }

    mutating func run() async throws -> ResumableUploadResponse {
        var phase = Phase.start
        do {
            while true {
                switch phase {
                case .start: phase = try await start()
                case .create: phase = try await create()
                case .append(let url, let offset): phase = try await append(to: url, at: offset)
                case .synchronize(let url, let stored): phase = try await synchronize(url, stored: stored)
                case .finished(let url, let answer):
                    if let store = options.store, let fingerprint { try await store.remove(fingerprint) }
                    report(confirmed: source.length, inFlight: 0)
                    return ResumableUploadResponse(
                        uploadURL: url, response: answer.response, data: answer.data,
                        resumedFromOffset: resumedFromOffset, bytesSent: bytesSent, creations: creations,
                        recoveries: recoveries)
                }
            }
        } catch {
            if options.terminatesOnCancel, Self.isCancellation(error), let currentURL { await terminate(currentURL) }
            throw error
        }
    }

    // MARK: Steps

    private mutating func start() async throws -> Phase {
        guard let store = options.store, let fingerprint, let url = try await store.uploadURL(for: fingerprint)
        else { return .create }
        currentURL = url
        options.uploadURLHandler?(url)
        return .synchronize(url: url, stored: true)
    }

    private mutating func create() async throws -> Phase {
        var headers = uploadProtocol.commonHeaders
        headers["Upload-Length"] = String(source.length)
        var carried: Int64 = 0
        switch uploadProtocol {
        case .tus:
            headers["Upload-Metadata"] = tusMetadata
            // Data rides with the creation only when it is the whole first append: a longer one
            // still needs a PATCH after it, so asking OPTIONS would cost a request and save none.
            let firstAppend = min(source.length, options.chunkSize ?? .max)
            if options.creationWithUploadLimit > 0, firstAppend > 0, firstAppend <= options.creationWithUploadLimit,
                await offersCreationWithUpload()
            {
                carried = firstAppend
            }
        case .ietf:
            headers["Upload-Complete"] = "?0"
            if let fileName = source.fileName { headers["Content-Disposition"] = Self.inlineDisposition(fileName) }
        }
        let body = carried > 0 ? try source.slice(from: 0, count: carried) : nil
        let outcome = try await exchange(
            creationMethod, endpoint, headers: headers, body: body, contentType: uploadProtocol.appendContentType,
            at: 0)
        guard let answer = try await answered(outcome) else { return .create }
        let status = answer.response.statusCode
        guard (200..<300).contains(status) else {
            if policy.retryableHTTPStatusCodes.contains(status) {
                try await recover(from: rejection(answer, "creating the upload"))
                return .create
            }
            throw rejection(answer, "creating the upload")
        }
        guard let location = answer.response.value(forHTTPHeaderField: "Location"),
            let url = URL(string: location, relativeTo: answer.request.url)?.absoluteURL
        else {
            throw rejection(answer, "creating the upload", problem: "no usable Location")
        }
        creations += 1
        noteLimits(in: answer)
        currentURL = url
        options.uploadURLHandler?(url)
        if let store = options.store, let fingerprint { try await store.save(url, for: fingerprint) }
        guard carried > 0 else {
            if source.length == 0 && uploadProtocol == .tus { return .finished(url, answer) }
            return .append(url: url, offset: 0)
        }
        guard let offset = try offset(in: answer, "creating the upload", required: false) else {
            return .synchronize(url: url, stored: false)
        }
        guard offset <= carried else {
            throw rejection(answer, "creating the upload", problem: "an offset past the data sent")
        }
        confirm(offset)
        return offset == source.length ? .finished(url, answer) : .append(url: url, offset: offset)
    }

    private mutating func append(to url: URL, at offset: Int64) async throws -> Phase {
        let count = min(source.length - offset, options.chunkSize ?? .max, appendLimit ?? .max)
        let isLast = offset + count == source.length
        var headers = uploadProtocol.commonHeaders
        headers["Upload-Offset"] = String(offset)
        if uploadProtocol == .ietf { headers["Upload-Complete"] = isLast ? "?1" : "?0" }
        let outcome = try await exchange(
            .patch, url, headers: headers, body: try source.slice(from: offset, count: count),
            contentType: uploadProtocol.appendContentType, at: offset)
        guard let answer = try await answered(outcome) else { return .synchronize(url: url, stored: false) }
        let status = answer.response.statusCode
        switch status {
        case 200..<300:
            if uploadProtocol == .ietf && isLast { return .finished(url, answer) }
            let reported = try self.offset(in: answer, "appending", required: uploadProtocol == .tus)
            let next = reported ?? offset + count
            guard next >= offset, next <= offset + count else {
                throw rejection(answer, "appending", problem: "an offset outside \(offset)...\(offset + count)")
            }
            guard next > offset || count == 0 else {
                try await recover(from: rejection(answer, "appending", problem: "no progress"))
                return .synchronize(url: url, stored: false)
            }
            confirm(next)
            if uploadProtocol == .tus && next == source.length { return .finished(url, answer) }
            return .append(url: url, offset: next)
        case 409:
            // The offsets disagree: ask the server instead of appending blindly.
            recoveries += 1
            failuresInRow += 1
            guard failuresInRow <= policy.retryLimit else { throw rejection(answer, "appending") }
            return .synchronize(url: url, stored: false)
        case 404, 410:
            return try await lost(url, answer, stored: false)
        default:
            let error = rejection(answer, "appending")
            guard policy.retryableHTTPStatusCodes.contains(status) else { throw error }
            try await recover(from: error)
            return .synchronize(url: url, stored: false)
        }
    }

    private mutating func synchronize(_ url: URL, stored: Bool) async throws -> Phase {
        let outcome = try await exchange(
            .head, url, headers: uploadProtocol.commonHeaders, body: nil, contentType: nil, at: confirmed)
        guard let answer = try await answered(outcome) else { return .synchronize(url: url, stored: stored) }
        let status = answer.response.statusCode
        switch status {
        case 200..<300:
            noteLimits(in: answer)
            guard let offset = try offset(in: answer, "asking for the offset", required: true) else {
                throw rejection(answer, "asking for the offset", problem: "no Upload-Offset")
            }
            if let length = answer.response.value(forHTTPHeaderField: "Upload-Length"),
                Int64(length.trimmingCharacters(in: .whitespaces)) != source.length
            {
                throw rejection(
                    answer, "asking for the offset", problem: "Upload-Length \(length) for \(source.length) bytes")
            }
            guard offset <= source.length else {
                throw rejection(answer, "asking for the offset", problem: "an offset past \(source.length) bytes")
            }
            if stored { resumedFromOffset = offset }
            confirm(offset)
            let complete =
                uploadProtocol == .ietf
                ? answer.response.value(forHTTPHeaderField: "Upload-Complete") == "?1"
                : offset == source.length
            return complete ? .finished(url, answer) : .append(url: url, offset: offset)
        case 403 where uploadProtocol == .tus, 404, 410:
            return try await lost(url, answer, stored: stored)
        default:
            let error = rejection(answer, "asking for the offset")
            guard policy.retryableHTTPStatusCodes.contains(status) else { throw error }
            try await recover(from: error)
            return .synchronize(url: url, stored: stored)
        }
    }

    /// The server no longer has the upload: start again when allowed, else fail.
    private mutating func lost(_ url: URL, _ answer: DataResponse<Data>, stored: Bool) async throws -> Phase {
        if let store = options.store, let fingerprint { try await store.remove(fingerprint) }
        currentURL = nil
        // A restart counts as a failure, so a server that loses every upload ends the call.
        failuresInRow += stored ? 0 : 1
        guard stored || (options.restartsLostUploads && failuresInRow <= policy.retryLimit) else {
            throw CourierError(
                .resumableUploadLost,
                "the server no longer has the upload at \(url.absoluteString): it answered \(Self.quote(answer))",
                offendingInput: url.absoluteString, response: answer.response, responseData: answer.data)
        }
        confirmed = 0
        report(confirmed: 0, inFlight: 0)
        return .create
    }

    // MARK: Requests

    /// One request through the manager; any status is an answer, a failure below HTTP an outcome
    /// too, and only cancellation is thrown.
    private mutating func exchange(
        _ method: HTTPMethod, _ url: URL, headers: [String: String], body: RequestBody?, contentType: String?,
        at offset: Int64
    ) async throws -> Outcome {
        var allHeaders = options.headers
        allHeaders.merge(headers) { _, new in new }
        let written = NIOLockedValueBox<Int64>(0)
        let total = source.length
        let caller = progress
        let handler: ProgressHandler = { step in
            written.withLockedValue { $0 = max($0, step.completedUnitCount) }
            caller?(
                TransferProgress(
                    completedUnitCount: min(total, offset + step.completedUnitCount), totalUnitCount: total))
        }
        defer { bytesSent += written.withLockedValue { $0 } }
        do {
            let response = try await manager.send(
                method, url.absoluteString, body.map { RequestContent.body($0, contentType: contentType) },
                headers: allHeaders, timeout: options.requestTimeout,
                serializer: HTTPResponseSerializer(acceptableStatusCodes: nil),
                uploadProgress: body == nil ? nil : handler)
            return .answered(response)
        } catch let error as CourierError {
            if Self.isCancellation(error) { throw error }
            return .failed(error)
        }
    }

    /// The answer an exchange got, or nil once a failure below HTTP has been waited out (the caller
    /// then tries its step again). Throws the failure when it is not transient or the retries are
    /// spent, or the cancellation that cut the wait short.
    private mutating func answered(_ outcome: Outcome) async throws -> DataResponse<Data>? {
        switch outcome {
        case .answered(let response): return response
        case .failed(let error):
            guard isTransient(error) else { throw error }
            try await recover(from: error)
            return nil
        }
    }

    /// tus: whether `OPTIONS` on the endpoint lists `creation-with-upload` in `Tus-Extension`;
    /// false when it cannot be asked.
    private mutating func offersCreationWithUpload() async -> Bool {
        guard
            case .answered(let answer)? = try? await exchange(
                .options, endpoint, headers: uploadProtocol.commonHeaders, body: nil, contentType: nil, at: 0),
            let extensions = answer.response.value(forHTTPHeaderField: "Tus-Extension")
        else { return false }
        return extensions.split(separator: ",").contains {
            $0.trimmingCharacters(in: .whitespaces) == "creation-with-upload"
        }
    }

    /// Deletes the upload on the server, in a task of its own since the caller's is cancelled,
    /// bounded by a 10-second deadline; forgets it in the store.
    private func terminate(_ url: URL) async {
        let manager = manager
        var headers = options.headers
        headers.merge(uploadProtocol.commonHeaders) { _, new in new }
        let sent = headers
        let deletion = Task {
            _ = try? await manager.send(
                .delete, url.absoluteString, nil, headers: sent, timeout: .seconds(10),
                serializer: HTTPResponseSerializer(acceptableStatusCodes: nil))
        }
        await deletion.value
        if let store = options.store, let fingerprint { try? await store.remove(fingerprint) }
    }

    // MARK: Bookkeeping

    /// Keeps the draft's `max-append-size` from an `Upload-Limit` dictionary (RFC 8941 members
    /// `key=integer`, separated by commas); a member that is not a positive integer is ignored.
    private mutating func noteLimits(in answer: DataResponse<Data>) {
        guard uploadProtocol == .ietf, let field = answer.response.value(forHTTPHeaderField: "Upload-Limit") else {
            return
        }
        for member in field.split(separator: ",") {
            let parts = member.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0] == "max-append-size", let limit = Int64(parts[1]), limit > 0 {
                appendLimit = limit
            }
        }
    }

    private mutating func confirm(_ offset: Int64) {
        if offset > confirmed { failuresInRow = 0 }
        confirmed = offset
        report(confirmed: offset, inFlight: 0)
    }

    private func report(confirmed: Int64, inFlight: Int64) {
        progress?(TransferProgress(completedUnitCount: confirmed + inFlight, totalUnitCount: source.length))
    }

    /// Counts a failure and waits the policy's back-off; rethrows `error` past the retry limit.
    private mutating func recover(from error: CourierError) async throws {
        failuresInRow += 1
        guard failuresInRow <= policy.retryLimit else { throw error }
        recoveries += 1
        try await manager.session.configuration.sleeper(policy.delay(forRetryCount: failuresInRow - 1))
    }

    private func isTransient(_ error: CourierError) -> Bool {
        policy.retryableErrorCodes.contains(error.code) || error.code == .transportFailed
    }

    private static func isCancellation(_ error: any Error) -> Bool {
        error is CancellationError || (error as? CourierError)?.code == .cancelled
    }

    /// The answer's `Upload-Offset`; nil when absent and not required.
    private func offset(in answer: DataResponse<Data>, _ step: String, required: Bool) throws -> Int64? {
        guard let field = answer.response.value(forHTTPHeaderField: "Upload-Offset") else {
            if required { throw rejection(answer, step, problem: "no Upload-Offset") }
            return nil
        }
        let trimmed = field.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.allSatisfy(\.isASCII), trimmed.allSatisfy(\.isNumber),
            let offset = Int64(trimmed)
        else {
            throw rejection(answer, step, problem: "Upload-Offset \(field.debugDescription) is not a byte count")
        }
        return offset
    }

    private func rejection(_ answer: DataResponse<Data>, _ step: String, problem: String? = nil) -> CourierError {
        let what = problem.map { " (\($0))" } ?? ""
        return CourierError(
            .resumableUploadRejected,
            "\(uploadProtocol == .tus ? "the tus server" : "the server") answered \(step) at "
                + "\(answer.request.url.absoluteString) with \(Self.quote(answer))\(what)",
            offendingInput: answer.request.url.absoluteString, response: answer.response, responseData: answer.data)
    }

    /// The status, the upload fields and the start of the body, as the error message quotes them.
    private static func quote(_ answer: DataResponse<Data>) -> String {
        var text = "\(answer.response.statusCode)"
        for name in ["Upload-Offset", "Upload-Length", "Upload-Complete", "Location"] {
            if let value = answer.response.value(forHTTPHeaderField: name) { text += ", \(name): \(value)" }
        }
        let body = String(decoding: answer.data.prefix(200), as: UTF8.self)
        if !body.isEmpty { text += ", body \(body.debugDescription)" }
        return text
    }

    private var tusMetadata: String {
        var pairs = options.metadata
        if let fileName = source.fileName, pairs["filename"] == nil { pairs["filename"] = fileName }
        if let type = source.contentType, pairs["filetype"] == nil { pairs["filetype"] = type }
        return pairs.sorted { $0.key < $1.key }
            .map { $0.key + " " + Data($0.value.utf8).base64EncodedString() }
            .joined(separator: ",")
    }

    /// `inline; filename="…"`, with `filename*` for names that are not plain ASCII.
    private static func inlineDisposition(_ fileName: String) -> String {
        let plain = fileName.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" }
        if plain { return "inline; filename=\"\(fileName)\"" }
        let encoded = fileName.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return "inline; filename*=UTF-8''\(encoded)"
    }
}

import Foundation
import HTTPTypes
import NIOCore

/// How one exchange uses the cache, from the request's ``CachePolicy`` and the task's kind.
enum CacheParticipation: Sendable, Hashable {
    /// Read, revalidate and store (RFC 9111).
    case use
    /// Send; store what comes back.
    case reload
    /// Send; store nothing (an unsafe method still invalidates).
    case bypass
    /// Answer from the cache or fail with `.cacheMiss`.
    case onlyIfCached

    init(_ policy: CachePolicy, isBulkTransfer: Bool) {
        switch policy {
        case .automatic: self = isBulkTransfer ? .bypass : .use
        case .useCache: self = .use
        case .reloadIgnoringCache: self = .reload
        case .bypass: self = .bypass
        case .onlyIfCached: self = .onlyIfCached
        }
    }
}

/// One exchange through the cache: what is answered from it, what is revalidated, what is
/// stored, and what an unsafe method invalidates.
extension HTTPCache {
    /// Answers `request` from the cache, or through `send` (one exchange with the network),
    /// storing what may be stored.
    /// - Throws: `.cacheMiss` for ``CacheParticipation/onlyIfCached`` without a usable stored
    ///   response; whatever `send` throws.
    func exchange(
        _ request: Request, participation: CacheParticipation,
        send: (Request) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        if CacheStorage.isUnsafe(request.method) {
            let response = try await send(request)
            if (200..<400).contains(response.head.statusCode) { invalidate(after: request, response: response.head) }
            return response
        }
        let fields = request.headerFields
        guard request.method == .get, participation != .bypass, fields[.range] == nil else {
            return try await send(request)
        }
        let directives = CacheStorage.requestDirectives(fields)
        let key = CacheStorage.key(request.url)
        // A request with its own validators asks the origin; the cache does not answer for it.
        let isConditional =
            fields[.ifNoneMatch] != nil || fields[.ifModifiedSince] != nil || fields[.ifMatch] != nil
            || fields[.ifUnmodifiedSince] != nil || fields[.ifRange] != nil
        var candidate: CachedResponse?
        if participation != .reload, !directives.noStore, !isConditional,
            let stored = lookup(key: key, requestFields: fields)
        {
            switch CacheReuse.decide(stored, request: directives, now: clock()) {
            case .serve(let age):
                // The cache keeps the bytes the transport delivered and not whether it decoded
                // them: a stored body under a coding is taken as decoded (so never resumed).
                let head = stored.head(age: age)
                return TransportResponse(
                    head: head, body: Self.chunks(stored.body), bodyIsDecoded: head.hasContentCoding)
            case .revalidate:
                candidate = stored.hasValidator ? stored : nil
            }
        }
        if participation == .onlyIfCached {
            throw CourierError(
                .cacheMiss, "no stored response may answer \(request.url.absoluteString) without the network",
                offendingInput: request.url.absoluteString)
        }
        if directives.onlyIfCached {
            // RFC 9111 §5.2.1.7: a cache that cannot answer says 504.
            return TransportResponse(
                head: ResponseHead(status: .gatewayTimeout, headerFields: [.contentLength: "0"], url: request.url),
                body: Self.chunks(ByteBuffer()))
        }
        var outgoing = request
        if let candidate {
            if let entityTag = candidate.headerFields[.eTag] { outgoing.headerFields[.ifNoneMatch] = entityTag }
            if let lastModified = candidate.headerFields[.lastModified] {
                outgoing.headerFields[.ifModifiedSince] = lastModified
            }
        }
        let requestTime = clock()
        let response = try await send(outgoing)
        let responseTime = clock()
        if let candidate, response.head.statusCode == 304 {
            await SessionTask.drain(response.body)
            let refreshed = candidate.freshened(
                with: response.head.headerFields, requestTime: requestTime, responseTime: responseTime)
            if CacheStorage.mayStore(
                status: refreshed.status.code, response: refreshed, requestFields: fields,
                requestDirectives: directives)
            {
                store(refreshed)
            } else {
                remove(key: key)
            }
            let head = refreshed.head(age: refreshed.currentAge(now: responseTime))
            return TransportResponse(
                head: head, body: Self.chunks(refreshed.body), bodyIsDecoded: head.hasContentCoding)
        }
        guard !directives.noStore else { return response }
        return recording(
            response, key: key, request: request, directives: directives, times: (requestTime, responseTime))
    }

    /// `response` with a body that, once it has ended complete, stores the response; the
    /// response as it is when it may not be stored.
    private func recording(
        _ response: TransportResponse, key: String, request: Request, directives: CacheControl,
        times: (request: Date, response: Date)
    ) -> TransportResponse {
        let head = response.head
        let varyNames = CacheVary.names(head.headerFields) ?? []
        let template = CachedResponse(
            key: key, url: head.url, status: head.status, headerFields: CacheStorage.storableFields(head.headerFields),
            body: ByteBuffer(), requestTime: times.request, responseTime: times.response,
            varyingFields: varyNames.map {
                CachedResponse.VaryingField(name: $0, value: CacheVary.value(of: $0, in: request.headerFields))
            })
        guard
            CacheStorage.mayStore(
                status: head.statusCode, response: template, requestFields: request.headerFields,
                requestDirectives: directives)
        else {
            // A response that may not be stored (no-store, say) must not leave an older one behind
            // that a later request would still be answered with.
            if head.statusCode < 500 { remove(key: key) }
            return response
        }
        let expectedLength = head.hasContentCoding ? nil : head.expectedContentLength
        let limit = maximumEntrySize
        let body = response.body
        let recorded = BodyChunks(makeNext: { [self] in
            var iterator = body.makeAsyncIterator()
            var collected = ByteBuffer()
            var keeping = true
            return {
                guard let chunk = try await iterator.next() else {
                    if keeping, expectedLength.map({ Int64(collected.readableBytes) == $0 }) ?? true {
                        var entry = template
                        entry.body = collected
                        if entry.byteCount <= limit { self.store(entry) }
                    }
                    keeping = false
                    return nil
                }
                if keeping {
                    if collected.readableBytes + chunk.readableBytes > limit {
                        keeping = false
                        collected = ByteBuffer()
                    } else if collected.readableBytes == 0 {
                        // Shares the chunk's storage; a second chunk copies on write.
                        collected = chunk
                    } else {
                        var chunk = chunk
                        collected.writeBuffer(&chunk)
                    }
                }
                return chunk
            }
        })
        return TransportResponse(
            head: head, body: recorded, bodyIsDecoded: response.bodyIsDecoded, raiseReadAhead: response.raiseReadAhead)
    }

    /// Removes what a non-error response to an unsafe request makes stale (§4.4): the target
    /// URI, and `Location` and `Content-Location` when they are on the same origin.
    private func invalidate(after request: Request, response: ResponseHead) {
        remove(key: CacheStorage.key(request.url))
        for name in [HTTPField.Name.location, .contentLocation] {
            guard let value = response.headerFields[name],
                let target = URL(string: value, relativeTo: request.url)?.absoluteURL,
                Self.sameOrigin(target, request.url)
            else { continue }
            remove(key: CacheStorage.key(target))
        }
    }

    private static func sameOrigin(_ first: URL, _ second: URL) -> Bool {
        first.scheme?.lowercased() == second.scheme?.lowercased()
            && first.host?.lowercased() == second.host?.lowercased()
            && first.port == second.port
    }

    static func chunks(_ body: ByteBuffer) -> BodyChunks {
        BodyChunks(SingleChunk(buffer: body))
    }
}

import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// `/cache…`: responses with caching headers and per-resource hit counters, for HTTP cache tests.
///
/// - `/cache` (httpbin): `Last-Modified` and `ETag`, or 304 when the request sends
///   `If-Modified-Since` or `If-None-Match`. `/cache/{n}` (httpbin): `Cache-Control: public, max-age=n`.
/// - `/cache/resource?id=ID` answers GET with `{"id", "version", "served", "accept"}` and
///   counts it under `ID`. Query items shape the head: `cc` (the `Cache-Control` value),
///   `etag=1` (an `ETag` of `"v<version>"`; a matching `If-None-Match` gets 304),
///   `last_modified=S` (`Last-Modified` S seconds before the resource's first request; a matching `If-Modified-Since` gets 304
///   when there is no ETag; a 304 adds `X-Revalidated: <count>`), `expires=S` (`Expires` S seconds from now; `expires=bad` sends
///   `0`), `age=N`, `vary=NAME`, `status=N`, `set_cookie=1`, `truncate=1` (declares 100 bytes
///   more than it sends, then closes). Every answer has a `Date`. Any other method bumps the
///   version, counts an update and answers 200 (`content_location=PATH` adds that field).
/// - `/cache/stats?id=ID`: the counters as JSON.
///
/// Counters live for the whole process, across servers: each test names its own ID.
enum CacheEndpoints {
    static func route(_ request: ServerRequest) -> any RequestBodyConsumer {
        let segments = request.segments
        switch segments.count {
        case 1: return DiscardingBody(httpbinCache(request))
        case 2 where segments[1] == "resource": return DiscardingBody(resource(request))
        case 2 where segments[1] == "stats":
            let stats = CacheResources.shared.stats(request.queryValue("id") ?? "default")
            return DiscardingBody(.json(stats.json))
        case 2:
            guard let seconds = Int(segments[1]), seconds >= 0 else {
                return DiscardingBody(.error(.badRequest, "/cache/{n} needs a number of seconds"))
            }
            return DiscardingBody(
                .json(request.headersJSON, headers: [("Cache-Control", "public, max-age=\(seconds)")]))
        default:
            return DiscardingBody(.error(.notFound, "no cache endpoint at \(request.path)"))
        }
    }

    private static func httpbinCache(_ request: ServerRequest) -> ResponsePlan {
        if request.header("If-Modified-Since") != nil || request.header("If-None-Match") != nil {
            return .empty(.notModified)
        }
        return .json(
            request.headersJSON,
            headers: [("Last-Modified", httpDate(Date())), ("ETag", "\"\(UUID().uuidString.lowercased())\"")])
    }

    private static func resource(_ request: ServerRequest) -> ResponsePlan {
        let id = request.queryValue("id") ?? "default"
        let now = Date()
        guard request.method == .GET || request.method == .HEAD else {
            CacheResources.shared.update(id)
            var headers = [("Date", httpDate(now))]
            if let location = request.queryValue("content_location") { headers.append(("Content-Location", location)) }
            return .json(["updated": .bool(true)], headers: headers)
        }
        let version = CacheResources.shared.version(id)
        var headers: [(name: String, value: String)] = [("Date", httpDate(now))]
        if let cacheControl = request.queryValue("cc") { headers.append(("Cache-Control", cacheControl)) }
        let entityTag = request.queryValue("etag") == "1" ? "\"v\(version)\"" : nil
        if let entityTag { headers.append(("ETag", entityTag)) }
        var lastModified: String?
        if let seconds = request.queryInt("last_modified") {
            // From the resource's first request, not from now: a date that moved with the clock
            // would stop matching `If-Modified-Since` whenever a second ticks between two requests.
            lastModified = httpDate(CacheResources.shared.firstSeen(id, now: now).addingTimeInterval(-Double(seconds)))
            headers.append(("Last-Modified", lastModified ?? ""))
        }
        if let expires = request.queryValue("expires") {
            headers.append(("Expires", Int(expires).map { httpDate(now.addingTimeInterval(Double($0))) } ?? "0"))
        }
        if let age = request.queryValue("age") { headers.append(("Age", age)) }
        if let vary = request.queryValue("vary") { headers.append(("Vary", vary)) }
        if request.queryValue("set_cookie") == "1" { headers.append(("Set-Cookie", "cached=\(version); Path=/")) }

        let matchesTag = entityTag != nil && request.header("If-None-Match") == entityTag
        let matchesDate = entityTag == nil && lastModified != nil && request.header("If-Modified-Since") == lastModified
        if matchesTag || matchesDate {
            let revalidations = CacheResources.shared.count(id, notModified: true)
            return .empty(.notModified, headers: headers + [("X-Revalidated", String(revalidations))])
        }
        let served = CacheResources.shared.count(id, notModified: false)
        let status = request.queryInt("status").flatMap { (200...599).contains($0) ? $0 : nil } ?? 200
        let body: TestServerJSON = [
            "id": .string(id), "version": .int(Int64(version)), "served": .int(Int64(served)),
            "accept": request.header("Accept").map(TestServerJSON.string) ?? .null,
        ]
        if request.queryValue("truncate") == "1" {
            let bytes = ByteBuffer(bytes: body.serialized())
            headers.insert(("Content-Type", "application/json"), at: 0)
            let source = CutSource(inner: BufferSource(bytes), ending: .close)
            var head = ResponseHeadSpec(status: HTTPResponseStatus(statusCode: status), headers: headers)
            head.closesConnection = true
            return .streamed(head, framing: .contentLength(bytes.readableBytes + 100), source: source)
        }
        return .json(body, status: HTTPResponseStatus(statusCode: status), headers: headers)
    }

    /// An IMF-fixdate (RFC 9110 §5.6.7), formatted here rather than by the client's code.
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

/// A body of one buffer, then the end.
final class BufferSource: ResponseBodySource {
    private var buffer: ByteBuffer?

    init(_ buffer: ByteBuffer) { self.buffer = buffer }

    func nextStep() -> BodyStep {
        guard let buffer else { return .end }
        self.buffer = nil
        return .bytes(buffer)
    }
}

/// What a test reads about one resource of `/cache/resource`.
package struct CacheResourceStats: Sendable, Equatable {
    /// GETs answered with a full response.
    package var served = 0
    /// GETs answered with 304.
    package var notModified = 0
    /// Requests with other methods (each bumps the version).
    package var updates = 0

    var json: TestServerJSON {
        ["served": .int(Int64(served)), "notModified": .int(Int64(notModified)), "updates": .int(Int64(updates))]
    }
}

/// The resources' counters and versions, shared by every connection, hence the lock.
final class CacheResources: Sendable {
    static let shared = CacheResources()

    private let resources = NIOLockedValueBox<[String: (stats: CacheResourceStats, version: Int)]>([:])

    private let firstRequests = NIOLockedValueBox<[String: Date]>([:])

    /// When `id` was first asked for (`now` on its first call).
    func firstSeen(_ id: String, now: Date) -> Date {
        firstRequests.withLockedValue { dates in
            if let date = dates[id] { return date }
            dates[id] = now
            return now
        }
    }

    func version(_ id: String) -> Int {
        resources.withLockedValue { $0[id]?.version ?? 1 }
    }

    /// Counts a full answer or a 304; returns the new count of that kind.
    @discardableResult
    func count(_ id: String, notModified: Bool) -> Int {
        resources.withLockedValue { resources in
            var entry = resources[id] ?? (CacheResourceStats(), 1)
            if notModified { entry.stats.notModified += 1 } else { entry.stats.served += 1 }
            resources[id] = entry
            return notModified ? entry.stats.notModified : entry.stats.served
        }
    }

    func update(_ id: String) {
        resources.withLockedValue { resources in
            var entry = resources[id] ?? (CacheResourceStats(), 1)
            entry.stats.updates += 1
            entry.version += 1
            resources[id] = entry
        }
    }

    func stats(_ id: String) -> CacheResourceStats {
        resources.withLockedValue { $0[id]?.stats ?? CacheResourceStats() }
    }
}

extension TestServer {
    /// The counters of one resource of `/cache/resource` (process-wide; see ``CacheResourceStats``).
    package func cacheStats(id: String) -> CacheResourceStats { CacheResources.shared.stats(id) }
}

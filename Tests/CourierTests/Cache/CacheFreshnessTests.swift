import Courier
import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import CourierCore

/// RFC 9111 §4.2 arithmetic with exact numbers: the RFC's example date as the origin of time.
@Suite("HTTP cache: freshness lifetime and age (RFC 9111 §4.2)")
struct CacheFreshnessTests {
    /// Sun, 06 Nov 1994 08:49:37 GMT.
    static let t0 = Date(timeIntervalSince1970: 784_111_777)
    static let url = URL(string: "http://127.0.0.1/resource")!

    static func entry(
        _ fields: HTTPFields, status: HTTPResponse.Status = .ok, requestTime: Date = t0, responseTime: Date = t0,
        varying: [CachedResponse.VaryingField] = []
    ) -> CachedResponse {
        CachedResponse(
            key: url.absoluteString, url: url, status: status, headerFields: fields, body: ByteBuffer(string: "body"),
            requestTime: requestTime, responseTime: responseTime, varyingFields: varying)
    }

    @Test("§4.2.3: corrected initial age and current age from Date, Age and the request and response times")
    func ageArithmetic() {
        // Date 10 s before the response arrived; Age 30; the exchange took 2 s.
        let fields: HTTPFields = [.date: "Sun, 06 Nov 1994 08:49:37 GMT", .age: "30"]
        let requestTime = Self.t0.addingTimeInterval(8)
        let responseTime = Self.t0.addingTimeInterval(10)
        // apparent_age = 10; corrected_age_value = 30 + 2 = 32; corrected_initial_age = 32.
        let initial = CacheFreshness.initialAge(fields: fields, requestTime: requestTime, responseTime: responseTime)
        #expect(initial == 32)
        // resident_time 100 s: current_age 132.
        let now = responseTime.addingTimeInterval(100)
        #expect(CacheFreshness.currentAge(initialAge: initial, responseTime: responseTime, now: now) == 132)

        // No Age: the apparent age wins (a Date 50 s in the past, a 1 s exchange).
        let late: HTTPFields = [.date: "Sun, 06 Nov 1994 08:49:37 GMT"]
        #expect(
            CacheFreshness.initialAge(
                fields: late, requestTime: Self.t0.addingTimeInterval(49), responseTime: Self.t0.addingTimeInterval(50))
                == 50)
        // A Date in the future (clock skew) gives no negative age.
        #expect(
            CacheFreshness.initialAge(
                fields: late, requestTime: Self.t0.addingTimeInterval(-20),
                responseTime: Self.t0.addingTimeInterval(-20))
                == 0)
        // No Date: the response time stands in, so only the delay counts. An invalid Age is 0.
        #expect(
            CacheFreshness.initialAge(
                fields: [.age: "soon"], requestTime: Self.t0, responseTime: Self.t0.addingTimeInterval(3)) == 3)
    }

    @Test(
        "§4.2.1: max-age, then Expires minus Date; s-maxage is ignored by a private cache",
        arguments: [
            (["max-age=60"], nil, 60.0),
            (["max-age=60"], "Sun, 06 Nov 1994 09:49:37 GMT", 60),
            ([], "Sun, 06 Nov 1994 09:49:37 GMT", 3600),
            (["s-maxage=600"], nil, 0),
            (["s-maxage=600, max-age=5"], nil, 5),
            (["s-maxage=600"], "Sun, 06 Nov 1994 08:59:37 GMT", 600),
            ([], "0", 0),
            ([], "Sun, 06 Nov 1994 08:00:00 GMT", 0),
            (["max-age=abc"], nil, 0),
            (["max-age=5", "max-age=10"], nil, 5),
            (["max-age=\"7\""], nil, 7),
            (["max-age=99999999999999"], nil, 2_147_483_648),
        ] as [([String], String?, Double)])
    func explicitLifetime(cacheControl: [String], expires: String?, expected: Double) {
        var fields: HTTPFields = [.date: "Sun, 06 Nov 1994 08:49:37 GMT"]
        for line in cacheControl { fields.append(HTTPField(name: .cacheControl, value: line)) }
        if let expires { fields[.expires] = expires }
        let lifetime = Self.entry(fields).lifetime
        #expect(lifetime == CacheFreshness.Lifetime(seconds: expected, isHeuristic: false))
    }

    @Test("Expires without Date is measured from the time the response arrived")
    func expiresWithoutDate() {
        let fields: HTTPFields = [.expires: "Sun, 06 Nov 1994 08:50:37 GMT"]
        #expect(Self.entry(fields, responseTime: Self.t0.addingTimeInterval(20)).lifetime.seconds == 40)
    }

    @Test(
        "§4.2.2: 10% of the time since Last-Modified, at most a day, only for heuristically cacheable statuses",
        arguments: [
            (200, 1000, 100.0, true),
            (404, 1000, 100, true),
            (301, 50_000, 5000, true),
            (200, 20 * 86_400, 86_400, true),
            (500, 1000, 0, false),
            (302, 1000, 0, false),
        ] as [(Int, Int, Double, Bool)])
    func heuristic(status: Int, secondsSinceModified: Int, expected: Double, isHeuristic: Bool) {
        let modified = Self.t0.addingTimeInterval(-Double(secondsSinceModified))
        let fields: HTTPFields = [
            .date: "Sun, 06 Nov 1994 08:49:37 GMT", .lastModified: Self.httpDate(modified),
        ]
        let lifetime = Self.entry(fields, status: HTTPResponse.Status(code: status)).lifetime
        #expect(lifetime == CacheFreshness.Lifetime(seconds: expected, isHeuristic: isHeuristic))
    }

    @Test("no heuristic when an explicit lifetime exists, or without Last-Modified")
    func noHeuristic() {
        let explicit: HTTPFields = [
            .date: "Sun, 06 Nov 1994 08:49:37 GMT", .lastModified: "Sat, 01 Jan 1994 00:00:00 GMT",
            .cacheControl: "max-age=0",
        ]
        #expect(Self.entry(explicit).lifetime == CacheFreshness.Lifetime(seconds: 0, isHeuristic: false))
        #expect(
            Self.entry([.date: "Sun, 06 Nov 1994 08:49:37 GMT"]).lifetime
                == CacheFreshness.Lifetime(seconds: 0, isHeuristic: false))
    }

    @Test("reuse: fresh, stale, and the request's max-age, min-fresh, max-stale, no-cache against must-revalidate")
    func reuseDecisions() {
        let stored = Self.entry([.date: "Sun, 06 Nov 1994 08:49:37 GMT", .cacheControl: "max-age=100"])
        let at = { (seconds: Double) in Self.t0.addingTimeInterval(seconds) }
        let plain = CacheControl()
        #expect(CacheReuse.decide(stored, request: plain, now: at(40)) == .serve(age: 40))
        #expect(CacheReuse.decide(stored, request: plain, now: at(100)) == .revalidate)
        #expect(CacheReuse.decide(stored, request: Self.directives("max-age=30"), now: at(40)) == .revalidate)
        #expect(CacheReuse.decide(stored, request: Self.directives("max-age=40"), now: at(40)) == .serve(age: 40))
        #expect(CacheReuse.decide(stored, request: Self.directives("min-fresh=61"), now: at(40)) == .revalidate)
        #expect(CacheReuse.decide(stored, request: Self.directives("min-fresh=60"), now: at(40)) == .serve(age: 40))
        #expect(CacheReuse.decide(stored, request: Self.directives("no-cache"), now: at(1)) == .revalidate)
        #expect(CacheReuse.decide(stored, request: Self.directives("max-stale"), now: at(500)) == .serve(age: 500))
        #expect(CacheReuse.decide(stored, request: Self.directives("max-stale=50"), now: at(150)) == .serve(age: 150))
        #expect(CacheReuse.decide(stored, request: Self.directives("max-stale=50"), now: at(151)) == .revalidate)

        let strict = Self.entry([.cacheControl: "max-age=100, must-revalidate"])
        #expect(CacheReuse.decide(strict, request: Self.directives("max-stale"), now: at(101)) == .revalidate)
        let noCache = Self.entry([.cacheControl: "max-age=100, no-cache"])
        #expect(CacheReuse.decide(noCache, request: plain, now: at(1)) == .revalidate)
        // Pragma: no-cache counts only when the request has no Cache-Control (§5.4).
        #expect(CacheStorage.requestDirectives([HTTPField.Name("Pragma")!: "no-cache"]).noCache)
        #expect(
            !CacheStorage.requestDirectives([HTTPField.Name("Pragma")!: "no-cache", .cacheControl: "max-age=5"]).noCache
        )
    }

    @Test("Cache-Control parsing: case, quoted arguments with commas, unknown directives")
    func parsing() {
        let directives = Self.directives("PUBLIC, no-cache=\"Set-Cookie, X-Thing\", Max-Age=9 , foo=bar, private")
        #expect(directives.isPublic && directives.noCache && directives.isPrivate)
        #expect(directives.maxAge == 9)
        #expect(!directives.noStore && !directives.mustRevalidate)
        #expect(Self.directives("max-stale").allowsStale && Self.directives("max-stale").maxStale == nil)
        #expect(Self.directives("max-stale=3").maxStale == 3)
    }

    static func directives(_ value: String) -> CacheControl {
        CacheControl([.cacheControl: value])
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

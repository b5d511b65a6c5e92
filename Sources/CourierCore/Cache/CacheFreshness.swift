import Foundation
import HTTPTypes

/// Freshness and age of a stored response, as RFC 9111 §4.2 computes them. Pure functions of
/// the response's fields and the times the cache recorded, so tests can check them with exact
/// numbers.
enum CacheFreshness {
    /// How long a response stays fresh, and whether that came from a heuristic.
    struct Lifetime: Sendable, Hashable {
        var seconds: Double
        var isHeuristic: Bool
    }

    /// The fraction of the time since `Last-Modified` that a heuristic grants (§4.2.2 names 10%
    /// as a typical setting).
    static let heuristicFraction = 0.1
    /// The most a heuristic grants: one day, the point past which RFC 7234 asked for a warning.
    static let heuristicCeiling: Double = 86_400

    /// Status codes that are heuristically cacheable (RFC 9110 §15.1).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// The freshness lifetime for a private cache (§4.2.1): `max-age`, else `Expires` minus
    /// `Date`, else a heuristic where §4.2.2 allows one, else 0. `s-maxage` is not used: it
    /// applies to shared caches only (§5.2.2.10).
    /// - Parameter responseTime: when the response was received; stands in for a missing `Date`.
    static func lifetime(status: Int, fields: HTTPFields, cacheControl: CacheControl, responseTime: Date) -> Lifetime {
        if let maxAge = cacheControl.maxAge { return Lifetime(seconds: Double(maxAge), isHeuristic: false) }
        let date = dateValue(fields) ?? responseTime
        if let expires = firstValue(fields, .expires) {
            // An Expires that is not a valid date means "already expired" (§5.3).
            guard let expiry = CookieDate.parse(expires) else { return Lifetime(seconds: 0, isHeuristic: false) }
            return Lifetime(seconds: max(0, expiry.timeIntervalSince(date)), isHeuristic: false)
        }
        guard heuristicallyCacheable.contains(status) || cacheControl.isPublic,
            let lastModifiedText = firstValue(fields, .lastModified),
            let lastModified = CookieDate.parse(lastModifiedText)
        else { return Lifetime(seconds: 0, isHeuristic: false) }
        let sinceModified = max(0, date.timeIntervalSince(lastModified))
        return Lifetime(
            seconds: min(heuristicCeiling, (sinceModified * heuristicFraction).rounded(.down)), isHeuristic: true)
    }

    /// The age the response already had when it was received: `corrected_initial_age` of
    /// §4.2.3, from `Date`, `Age` and the request and response times.
    static func initialAge(fields: HTTPFields, requestTime: Date, responseTime: Date) -> Double {
        let dateValue = dateValue(fields) ?? responseTime
        let apparentAge = max(0, responseTime.timeIntervalSince(dateValue))
        let responseDelay = max(0, responseTime.timeIntervalSince(requestTime))
        let ageValue = Double(firstValue(fields, .age).flatMap { CacheControl.deltaSeconds($0) } ?? 0)
        let correctedAgeValue = ageValue + responseDelay
        return max(apparentAge, correctedAgeValue)
    }

    /// `current_age` of §4.2.3: the initial age plus the time the response has been stored.
    static func currentAge(initialAge: Double, responseTime: Date, now: Date) -> Double {
        initialAge + max(0, now.timeIntervalSince(responseTime))
    }

    /// The `Date` field's instant, when present and valid.
    static func dateValue(_ fields: HTTPFields) -> Date? {
        firstValue(fields, .date).flatMap(CookieDate.parse)
    }

    /// The first line of a field: of two `Expires` or `Age` lines, the first counts (§4.2.1).
    static func firstValue(_ fields: HTTPFields, _ name: HTTPField.Name) -> String? {
        fields.first { $0.name == name }?.value
    }
}

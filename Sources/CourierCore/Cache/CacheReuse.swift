import Foundation

/// Whether a stored response may answer a request without the network (RFC 9111 §4.2, §4.3,
/// §5.2.1): a pure function of the stored response, the request's directives and the time.
enum CacheReuse {
    enum Decision: Sendable, Equatable {
        /// Hand the stored response out; `age` is its current age in seconds.
        case serve(age: Double)
        /// Ask the origin first (a conditional request when there is a validator).
        case revalidate
    }

    static func decide(_ stored: CachedResponse, request: CacheControl, now: Date) -> Decision {
        let age = stored.currentAge(now: now)
        let response = stored.cacheControl
        if response.noCache || request.noCache { return .revalidate }
        if let maxAge = request.maxAge, age > Double(maxAge) { return .revalidate }
        let remaining = stored.lifetime.seconds - age
        if let minFresh = request.minFresh, remaining < Double(minFresh) { return .revalidate }
        if remaining > 0 { return .serve(age: age) }
        // Stale: only a request that accepts it gets it, never past must-revalidate (§5.2.2.2).
        guard request.allowsStale, !response.mustRevalidate else { return .revalidate }
        if let maxStale = request.maxStale, -remaining > Double(maxStale) { return .revalidate }
        return .serve(age: age)
    }
}

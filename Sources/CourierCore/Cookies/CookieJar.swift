import Foundation

/// A thread-safe, in-memory ``CookieStorage``: what a ``SessionManager`` uses by default.
///
/// Cookies are kept per domain, so a lookup visits only the buckets of the request host and
/// its parent domains. Expired cookies are dropped whenever a bucket is visited, and all at
/// once by ``removeExpiredCookies()``. When a domain holds more than
/// ``maximumCookiesPerDomain`` cookies, or the jar more than ``maximumCookieCount``, expired
/// cookies go first and then the least recently sent or stored ones (RFC 6265 §5.3 step 12 and
/// its eviction advice). All state sits behind one lock, held only for in-memory work.
///
/// ```swift
/// let jar = CookieJar()
/// var configuration = SessionManager.Configuration()
/// configuration.cookieStorage = jar
/// ```
public final class CookieJar: CookieStorage, @unchecked Sendable {
    /// The most cookies kept for one domain; more evicts (default 50, as RFC 6265 §6.1's minimum).
    public let maximumCookiesPerDomain: Int
    /// The most cookies kept in all (default 3000, as RFC 6265 §6.1's minimum).
    public let maximumCookieCount: Int

    private let now: @Sendable () -> Date
    // Guards `state`; the unchecked Sendable conformance rests on every access taking it.
    private let lock = NSLock()
    private var state = State()

    private struct Entry {
        var cookie: Cookie
        /// Insertion order, for a stable order among cookies created in the same instant.
        var sequence: UInt64
        /// The tick of the last send or store, for least-recently-used eviction.
        var lastAccess: UInt64
    }

    private struct State {
        var buckets: [String: [Entry]] = [:]
        var count = 0
        var tick: UInt64 = 0

        mutating func nextTick() -> UInt64 {
            tick += 1
            return tick
        }
    }

    /// Makes an empty jar.
    /// - Parameters:
    ///   - maximumCookiesPerDomain: the per-domain cap; values below 1 count as 1.
    ///   - maximumCookieCount: the overall cap; values below 1 count as 1.
    ///   - now: the clock that decides expiry; inject a fixed one in tests.
    public init(
        maximumCookiesPerDomain: Int = 50, maximumCookieCount: Int = 3000,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.maximumCookiesPerDomain = max(1, maximumCookiesPerDomain)
        self.maximumCookieCount = max(1, maximumCookieCount)
        self.now = now
    }

    private func withState<Result>(_ body: (inout State) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    // MARK: CookieStorage

    /// The unexpired cookies for `url`, longest path first, then oldest first (RFC 6265 §5.4);
    /// empty for a URL without a host.
    public func cookies(for url: URL) -> [Cookie] {
        // Every request of a session asks, most of them of an empty jar: answer that without
        // building the host's candidate domains.
        guard withState({ $0.count > 0 }), let host = CookieMatching.canonicalHost(of: url) else { return [] }
        let date = now()
        let domains = Self.candidateDomains(for: host)
        var found: [Entry] = []
        withState { state in
            let tick = state.nextTick()
            for domain in domains {
                guard var bucket = state.buckets[domain] else { continue }
                let before = bucket.count
                bucket.removeAll { $0.cookie.isExpired(at: date) }
                for index in bucket.indices where bucket[index].cookie.matches(url) {
                    bucket[index].lastAccess = tick
                    found.append(bucket[index])
                }
                state.count -= before - bucket.count
                state.buckets[domain] = bucket.isEmpty ? nil : bucket
            }
        }
        found.sort { a, b in
            let aLength = a.cookie.path.utf8.count
            let bLength = b.cookie.path.utf8.count
            if aLength != bLength { return aLength > bLength }
            if a.cookie.creationDate != b.cookie.creationDate { return a.cookie.creationDate < b.cookie.creationDate }
            return a.sequence < b.sequence
        }
        return found.map(\.cookie)
    }

    /// Stores `cookies` in order (see ``CookieStorage/setCookies(_:receivedFrom:)``). The jar
    /// trusts that they were parsed against `url`, as ``Cookie/init(setCookie:receivedFrom:at:)`` does.
    public func setCookies(_ cookies: [Cookie], receivedFrom url: URL) {
        let date = now()
        withState { state in
            for cookie in cookies { self.store(cookie, at: date, in: &state) }
        }
    }

    // MARK: Direct access

    /// Stores one cookie, replacing one with the same name, domain and path; an expired cookie
    /// only removes that one.
    public func setCookie(_ cookie: Cookie) {
        let date = now()
        withState { state in self.store(cookie, at: date, in: &state) }
    }

    /// Every cookie in the jar, expired ones included until they are evicted, sorted by
    /// domain, path and name.
    public var allCookies: [Cookie] {
        let cookies = withState { state in state.buckets.values.flatMap { $0.map(\.cookie) } }
        return cookies.sorted { ($0.domain, $0.path, $0.name) < ($1.domain, $1.path, $1.name) }
    }

    /// How many cookies the jar holds.
    public var count: Int { withState { $0.count } }

    /// Removes the cookie with this name, domain and path, if there is one.
    public func deleteCookie(name: String, domain: String, path: String) {
        let domain = CookieMatching.canonicalDomain(domain)
        withState { state in
            guard var bucket = state.buckets[domain],
                let index = bucket.firstIndex(where: { $0.cookie.name == name && $0.cookie.path == path })
            else { return }
            bucket.remove(at: index)
            state.count -= 1
            state.buckets[domain] = bucket.isEmpty ? nil : bucket
        }
    }

    /// Removes every cookie.
    public func removeAll() {
        withState { state in state = State() }
    }

    /// Removes every cookie whose expiry has passed.
    public func removeExpiredCookies() {
        let date = now()
        withState { state in Self.removeExpired(at: date, from: &state) }
    }

    // MARK: Internals

    /// The host and each parent domain (`a.b.c` → `a.b.c`, `b.c`, `c`): the only buckets whose
    /// cookies can domain-match it. An IP address matches only itself.
    private static func candidateDomains(for host: String) -> [String] {
        if CookieMatching.isIPAddress(host) { return [host] }
        var domains = [host]
        var rest = Substring(host)
        while let dot = rest.firstIndex(of: ".") {
            rest = rest[rest.index(after: dot)...]
            if !rest.isEmpty { domains.append(String(rest)) }
        }
        return domains
    }

    private func store(_ cookie: Cookie, at date: Date, in state: inout State) {
        let tick = state.nextTick()
        var cookie = cookie
        var bucket = state.buckets[cookie.domain] ?? []
        var sequence = tick
        if let index = bucket.firstIndex(where: { $0.cookie.name == cookie.name && $0.cookie.path == cookie.path }) {
            // A replacement keeps the original's creation time, and so its place in the header.
            cookie.creationDate = bucket[index].cookie.creationDate
            sequence = bucket[index].sequence
            bucket.remove(at: index)
            state.count -= 1
        }
        if !cookie.isExpired(at: date) {
            bucket.append(Entry(cookie: cookie, sequence: sequence, lastAccess: tick))
            state.count += 1
            if bucket.count > maximumCookiesPerDomain {
                let before = bucket.count
                bucket.removeAll { $0.cookie.isExpired(at: date) }
                while bucket.count > maximumCookiesPerDomain, let victim = Self.leastRecentlyUsed(in: bucket) {
                    bucket.remove(at: victim)
                }
                state.count -= before - bucket.count
            }
        }
        state.buckets[cookie.domain] = bucket.isEmpty ? nil : bucket
        if state.count > maximumCookieCount {
            Self.removeExpired(at: date, from: &state)
            while state.count > maximumCookieCount {
                guard let (domain, index) = Self.leastRecentlyUsed(in: state) else { break }
                state.buckets[domain]?.remove(at: index)
                if state.buckets[domain]?.isEmpty == true { state.buckets[domain] = nil }
                state.count -= 1
            }
        }
    }

    private static func leastRecentlyUsed(in bucket: [Entry]) -> Int? {
        bucket.indices.min {
            (bucket[$0].lastAccess, bucket[$0].sequence) < (bucket[$1].lastAccess, bucket[$1].sequence)
        }
    }

    private static func leastRecentlyUsed(in state: State) -> (String, Int)? {
        var best: (domain: String, index: Int, key: (UInt64, UInt64))?
        for (domain, bucket) in state.buckets {
            for (index, entry) in bucket.enumerated() {
                let key = (entry.lastAccess, entry.sequence)
                if let current = best, !(key < current.key) { continue }
                best = (domain, index, key)
            }
        }
        return best.map { ($0.domain, $0.index) }
    }

    private static func removeExpired(at date: Date, from state: inout State) {
        for (domain, bucket) in state.buckets {
            let kept = bucket.filter { !$0.cookie.isExpired(at: date) }
            if kept.count != bucket.count {
                state.count -= bucket.count - kept.count
                state.buckets[domain] = kept.isEmpty ? nil : kept
            }
        }
    }
}

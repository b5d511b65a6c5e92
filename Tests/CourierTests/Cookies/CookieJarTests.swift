import Courier
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import CourierCore

/// A clock the test moves by hand, so expiry is tested without waiting.
final class ManualClock: Sendable {
    private let box: NIOLockedValueBox<Date>
    init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) { box = NIOLockedValueBox(start) }
    var now: Date { box.withLockedValue { $0 } }
    func advance(by seconds: TimeInterval) { box.withLockedValue { $0 = $0.addingTimeInterval(seconds) } }
    var function: @Sendable () -> Date { { self.now } }
}

/// ``CookieJar``: matching, order, replacement, expiry, caps, thread safety.
@Suite struct CookieJarTests {
    let clock = ManualClock()

    func makeJar(perDomain: Int = 50, total: Int = 3000) -> CookieJar {
        CookieJar(maximumCookiesPerDomain: perDomain, maximumCookieCount: total, now: clock.function)
    }

    /// Parses and stores `setCookie` lines as a response to `url` would.
    func receive(_ jar: CookieJar, _ url: String, _ setCookies: String...) throws {
        let url = try #require(URL(string: url))
        let cookies = setCookies.compactMap { Cookie(setCookie: $0, receivedFrom: url, at: clock.now) }
        #expect(cookies.count == setCookies.count, "a Set-Cookie line was rejected")
        jar.setCookies(cookies, receivedFrom: url)
    }

    func header(_ jar: CookieJar, _ url: String) -> String? {
        URL(string: url).flatMap { jar.cookieHeaderValue(for: $0) }
    }

    @Test func rfcSection3Example() throws {
        let jar = makeJar()
        try receive(jar, "https://www.example.com/", "SID=31d4d96e407aad42; Path=/; Secure; HttpOnly")
        try receive(jar, "https://www.example.com/", "lang=en-US; Path=/; Domain=example.com")
        #expect(header(jar, "https://www.example.com/") == "SID=31d4d96e407aad42; lang=en-US")
        #expect(header(jar, "http://www.example.com/") == "lang=en-US", "Secure goes to https only")
        #expect(header(jar, "https://docs.example.com/") == "lang=en-US", "the host-only SID stays on www")
        #expect(header(jar, "https://example.com/") == "lang=en-US")
        #expect(header(jar, "https://badexample.com/") == nil)
        #expect(header(jar, "https://www.example.org/") == nil)
    }

    @Test func orderIsLongestPathThenOldest() throws {
        let jar = makeJar()
        try receive(jar, "http://h.example/", "a=1; Path=/")
        clock.advance(by: 1)
        try receive(jar, "http://h.example/", "b=2; Path=/docs")
        clock.advance(by: 1)
        try receive(jar, "http://h.example/", "c=3; Path=/")
        try receive(jar, "http://h.example/", "d=4; Path=/docs/x/")
        try receive(jar, "http://h.example/", "e=5; Path=/")  // same instant as c: insertion order decides
        #expect(header(jar, "http://h.example/docs/x/y") == "d=4; b=2; a=1; c=3; e=5")
        #expect(header(jar, "http://h.example/docs") == "b=2; a=1; c=3; e=5")
        #expect(header(jar, "http://h.example/docsx") == "a=1; c=3; e=5", "/docs does not path-match /docsx")
        #expect(header(jar, "http://h.example/docs/x") == "b=2; a=1; c=3; e=5", "/docs/x/ does not match /docs/x")
    }

    @Test func replacementKeepsCreationTimeAndPlace() throws {
        let jar = makeJar()
        try receive(jar, "http://h.example/", "a=1; Path=/")
        clock.advance(by: 1)
        try receive(jar, "http://h.example/", "b=2; Path=/")
        clock.advance(by: 1)
        try receive(jar, "http://h.example/", "a=changed; Path=/; HttpOnly")
        #expect(header(jar, "http://h.example/") == "a=changed; b=2")
        #expect(jar.count == 2)
        let replaced = try #require(jar.allCookies.first { $0.name == "a" })
        #expect(replaced.creationDate == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(replaced.httpOnly)
    }

    @Test func sameNameDifferentPathOrDomainAreDistinct() throws {
        let jar = makeJar()
        try receive(jar, "http://www.example.com/", "a=root; Path=/", "a=deep; Path=/x")
        try receive(jar, "http://www.example.com/", "a=wide; Path=/; Domain=example.com")
        #expect(jar.count == 3)
        #expect(header(jar, "http://www.example.com/x/1") == "a=deep; a=root; a=wide")
        // Host-only and domain cookies for the same domain string share the key (name, domain, path).
        try receive(jar, "http://example.com/", "a=host-only; Path=/")
        #expect(jar.count == 3)
        #expect(header(jar, "http://www.example.com/") == "a=root")
        #expect(header(jar, "http://example.com/") == "a=host-only")
    }

    @Test func expiredSetCookieDeletes() throws {
        let jar = makeJar()
        try receive(jar, "http://h.example/", "a=1; Path=/", "b=2; Path=/")
        try receive(jar, "http://h.example/", "a=; Path=/; Max-Age=0")
        #expect(header(jar, "http://h.example/") == "b=2")
        try receive(jar, "http://h.example/", "b=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(header(jar, "http://h.example/") == nil)
        #expect(jar.count == 0)
        // A deletion with another path deletes nothing.
        try receive(jar, "http://h.example/", "c=3; Path=/")
        try receive(jar, "http://h.example/", "c=; Path=/other; Max-Age=0")
        #expect(header(jar, "http://h.example/") == "c=3")
    }

    @Test func cookiesExpireWithTheClock() throws {
        let jar = makeJar()
        try receive(jar, "http://h.example/", "short=1; Max-Age=10; Path=/", "session=2; Path=/")
        try receive(jar, "http://other.example/", "long=3; Max-Age=100")
        clock.advance(by: 9)
        #expect(header(jar, "http://h.example/") == "short=1; session=2")
        clock.advance(by: 1)
        #expect(header(jar, "http://h.example/") == "session=2", "expiry is inclusive")
        #expect(jar.count == 2, "visiting the bucket evicted the expired cookie")
        clock.advance(by: 100)
        #expect(jar.allCookies.count == 2, "allCookies shows expired cookies until they are evicted")
        jar.removeExpiredCookies()
        #expect(jar.allCookies.map(\.name) == ["session"])
    }

    @Test func perDomainCapEvictsLeastRecentlyUsed() throws {
        let jar = makeJar(perDomain: 3)
        try receive(jar, "http://h.example/", "a=1", "b=2", "c=3")
        _ = header(jar, "http://h.example/")  // all three used now; a was stored first
        try receive(jar, "http://h.example/", "d=4")
        #expect(Set(jar.allCookies.map(\.name)) == ["b", "c", "d"])
        try receive(jar, "http://h.example/", "b=22")  // a store counts as a use
        try receive(jar, "http://h.example/", "e=5")
        #expect(Set(jar.allCookies.map(\.name)) == ["b", "d", "e"])
        try receive(jar, "http://other.example/", "x=1")
        #expect(jar.count == 4, "the cap is per domain")
    }

    @Test func perDomainCapDropsExpiredFirst() throws {
        let jar = makeJar(perDomain: 2)
        try receive(jar, "http://h.example/", "old=1; Max-Age=5", "keep=2")
        clock.advance(by: 10)
        try receive(jar, "http://h.example/", "new=3")
        #expect(Set(jar.allCookies.map(\.name)) == ["keep", "new"])
    }

    @Test func totalCapEvictsAcrossDomains() throws {
        let jar = makeJar(total: 3)
        try receive(jar, "http://a.example/", "a=1")
        try receive(jar, "http://b.example/", "b=1")
        try receive(jar, "http://c.example/", "c=1")
        _ = header(jar, "http://a.example/")
        try receive(jar, "http://d.example/", "d=1")
        #expect(Set(jar.allCookies.map(\.domain)) == ["a.example", "c.example", "d.example"])
        #expect(jar.count == 3)
    }

    @Test func directAccess() throws {
        let jar = makeJar()
        jar.setCookie(try Cookie(name: "x", value: "1", domain: "h.example", path: "/p"))
        #expect(header(jar, "http://h.example/p/q") == "x=1")
        #expect(header(jar, "http://H.EXAMPLE/p") == "x=1", "hosts are compared lower-cased")
        jar.deleteCookie(name: "x", domain: "H.example", path: "/p")
        #expect(jar.count == 0)
        try receive(jar, "http://h.example/", "a=1", "b=2")
        jar.removeAll()
        #expect(jar.count == 0 && jar.allCookies.isEmpty)
        #expect(jar.cookies(for: URL(string: "file:///etc/passwd")!).isEmpty)
    }

    @Test func ipHostsGetOnlyTheirOwnCookies() throws {
        let jar = makeJar()
        try receive(jar, "http://127.0.0.1:8080/", "a=1; Path=/")
        #expect(header(jar, "http://127.0.0.1:9090/") == "a=1", "cookies are not isolated by port (RFC 6265 §8.5)")
        #expect(header(jar, "http://27.0.0.1/") == nil)
        #expect(header(jar, "http://localhost:8080/") == nil)
    }

    @Test func concurrentUseKeepsCountsConsistent() async throws {
        let jar = makeJar(perDomain: 1000)
        let url = try #require(URL(string: "http://h.example/"))
        let now = clock.now
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<200 {
                        let cookie = Cookie(
                            setCookie: "w\(worker)-\(index % 20)=\(index); Path=/", receivedFrom: url, at: now)
                        jar.setCookies(cookie.map { [$0] } ?? [], receivedFrom: url)
                        _ = jar.cookies(for: url)
                        if index % 7 == 0 { jar.deleteCookie(name: "w\(worker)-0", domain: "h.example", path: "/") }
                    }
                }
            }
        }
        // Each worker ends with its names 1…19: name 0 was last written at index 180 and last
        // deleted at index 196.
        let names = Set(jar.allCookies.map(\.name))
        #expect(jar.count == jar.allCookies.count)
        #expect(names.count == jar.count, "no duplicate (name, domain, path)")
        #expect(jar.count == 8 * 19)
        #expect(!names.contains { $0.hasSuffix("-0") })
    }
}

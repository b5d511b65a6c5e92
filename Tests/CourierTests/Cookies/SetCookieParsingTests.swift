import Courier
import Foundation
import Testing

@testable import CourierCore

/// `Set-Cookie` parsing (RFC 6265 §5.2) and the storage rules that need the request URL (§5.3).
@Suite struct SetCookieParsingTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    static let page = URL(string: "http://www.example.com/docs/a/page.html")!

    func parse(_ text: String, from url: URL = page) -> Cookie? {
        Cookie(setCookie: text, receivedFrom: url, at: Self.now)
    }

    // MARK: RFC 6265 §3.1 examples

    @Test func rfcExamples() throws {
        let session = try #require(parse("SID=31d4d96e407aad42"))
        #expect(session.name == "SID")
        #expect(session.value == "31d4d96e407aad42")
        #expect(session.domain == "www.example.com")
        #expect(session.hostOnly)
        #expect(session.path == "/docs/a")
        #expect(session.expires == nil)
        #expect(!session.secure && !session.httpOnly)
        #expect(session.creationDate == Self.now)

        let scoped = try #require(parse("SID=31d4d96e407aad42; Path=/; Domain=example.com"))
        #expect(scoped.domain == "example.com")
        #expect(!scoped.hostOnly)
        #expect(scoped.path == "/")

        let flagged = try #require(parse("SID=31d4d96e407aad42; Path=/; Secure; HttpOnly"))
        #expect(flagged.secure && flagged.httpOnly)

        let persistent = try #require(parse("lang=en-US; Expires=Wed, 09 Jun 2021 10:18:14 GMT"))
        #expect(persistent.expires == Date(timeIntervalSince1970: 1_623_233_894))

        let deletion = try #require(parse("lang=; Expires=Sun, 06 Nov 1994 08:49:37 GMT"))
        #expect(deletion.value == "")
        #expect(deletion.isExpired(at: Self.now))
    }

    @Test func nameAndValueTrimmedAndValueMayHoldEqualsAndQuotes() throws {
        let cookie = try #require(parse("  token \t=  a=b==\"q\"  ; Path=/"))
        #expect(cookie.name == "token")
        #expect(cookie.value == "a=b==\"q\"")
        #expect(try #require(parse("empty=")).value == "")
    }

    // MARK: Attributes

    @Test func attributeNamesAreCaseInsensitiveAndUnknownOnesIgnored() throws {
        let cookie = try #require(
            parse("a=b; pAtH=/x; SECURE; hTTpOnLy; samesite=LAX; Priority=High; Partitioned; Foo=bar=baz; ;;"))
        #expect(cookie.path == "/x")
        #expect(cookie.secure && cookie.httpOnly)
        #expect(cookie.sameSite == .lax)
        #expect(try #require(parse("a=b; SameSite=strict")).sameSite == .strict)
        #expect(try #require(parse("a=b; SameSite=None; Secure")).sameSite == Cookie.SameSite.none)
        #expect(try #require(parse("a=b; SameSite=bogus")).sameSite == nil)
        #expect(try #require(parse("a=b; Secure=no")).secure, "a value does not unset a flag")
    }

    @Test func maxAgeWinsOverExpiresInEitherOrder() throws {
        let later = Self.now.addingTimeInterval(60)
        #expect(try #require(parse("a=b; Expires=Sun, 06 Nov 1994 08:49:37 GMT; Max-Age=60")).expires == later)
        #expect(try #require(parse("a=b; Max-Age=60; Expires=Sun, 06 Nov 1994 08:49:37 GMT")).expires == later)
        #expect(try #require(parse("a=b; max-age=60; max-age=120")).expires == Self.now.addingTimeInterval(120))
    }

    @Test func maxAgeValues() throws {
        #expect(try #require(parse("a=b; Max-Age=0")).expires == Date.distantPast)
        #expect(try #require(parse("a=b; Max-Age=-5")).expires == Date.distantPast)
        #expect(try #require(parse("a=b; Max-Age=00042")).expires == Self.now.addingTimeInterval(42))
        #expect(try #require(parse("a=b; Max-Age=99999999999999999999999999")).expires == Date.distantFuture)
        // Not digits: the attribute is skipped, so Expires (or nothing) decides.
        for bad in ["+5", "5s", "", "1.5", " - 5", "０"] {
            #expect(try #require(parse("a=b; Max-Age=\(bad)")).expires == nil, "Max-Age=\(bad)")
        }
        #expect(
            try #require(parse("a=b; Max-Age=soon; Expires=Wed, 09 Jun 2021 10:18:14 GMT")).expires
                == Date(timeIntervalSince1970: 1_623_233_894))
    }

    @Test func invalidExpiresIsIgnored() throws {
        #expect(try #require(parse("a=b; Expires=tomorrow")).expires == nil)
        #expect(
            try #require(parse("a=b; Expires=Wed, 09 Jun 2021 10:18:14 GMT; Expires=never")).expires
                == Date(timeIntervalSince1970: 1_623_233_894))
    }

    // MARK: Domain (§5.1.3, §5.3 steps 4–6)

    @Test func domainAttribute() throws {
        let dotted = try #require(parse("a=b; Domain=.Example.COM"))
        #expect(dotted.domain == "example.com")
        #expect(!dotted.hostOnly)
        let exact = try #require(parse("a=b; Domain=www.example.com"))
        #expect(exact.domain == "www.example.com")
        #expect(!exact.hostOnly)
        let empty = try #require(parse("a=b; Domain="))
        #expect(empty.hostOnly && empty.domain == "www.example.com")
        #expect(try #require(parse("a=b; Domain=other.com; Domain=example.com")).domain == "example.com")
    }

    @Test(arguments: [
        "a=b; Domain=other.com",  // not this host
        "a=b; Domain=ww.example.com",  // a suffix, but not at a dot
        "a=b; Domain=sub.www.example.com",  // a subdomain of the host
        "a=b; Domain=com",  // a single label stands in for a public suffix
        "a=b; Domain=exa mple.com",
        "a=b; Domain=example.com; Domain=evil.com",  // the last Domain counts
    ])
    func domainThatDoesNotMatchRejectsTheCookie(text: String) {
        #expect(parse(text) == nil, "\(text)")
    }

    @Test func singleLabelHostMaySetItsOwnDomainAsHostOnly() throws {
        let url = URL(string: "http://localhost:8080/")!
        let cookie = try #require(parse("a=b; Domain=localhost", from: url))
        #expect(cookie.hostOnly && cookie.domain == "localhost")
        #expect(parse("a=b; Domain=example", from: url) == nil)
    }

    @Test func ipHostsMatchOnlyThemselves() throws {
        let url = URL(string: "http://127.0.0.1:8080/")!
        #expect(parse("a=b; Domain=0.0.1", from: url) == nil)
        #expect(parse("a=b; Domain=1", from: url) == nil)
        let exact = try #require(parse("a=b; Domain=127.0.0.1", from: url))
        #expect(exact.domain == "127.0.0.1")
        #expect(try #require(parse("a=b", from: url)).domain == "127.0.0.1")
        let ipv6 = try #require(parse("a=b", from: URL(string: "http://[::1]:8080/x")!))
        #expect(ipv6.domain == "::1")
    }

    // MARK: Path (§5.1.4, §5.2.4)

    @Test(arguments: [
        ("http://h.example/", "/"),
        ("http://h.example", "/"),
        ("http://h.example/a", "/"),
        ("http://h.example/a/", "/a"),
        ("http://h.example/a/b/c?x=/y/z", "/a/b"),
        ("http://h.example/a%2Fb/c", "/a%2Fb"),
    ])
    func defaultPath(url: String, expected: String) throws {
        #expect(try #require(parse("a=b", from: URL(string: url)!)).path == expected, "\(url)")
    }

    @Test func pathAttribute() throws {
        #expect(try #require(parse("a=b; Path=/x/y/")).path == "/x/y/")
        #expect(try #require(parse("a=b; Path=")).path == "/docs/a")
        #expect(try #require(parse("a=b; Path=relative")).path == "/docs/a")
        #expect(try #require(parse("a=b; Path=/x; Path=relative")).path == "/docs/a", "the last Path counts")
    }

    // MARK: Prefixes (RFC 6265bis §4.1.3)

    @Test func securePrefixes() throws {
        let https = URL(string: "https://www.example.com/a/b")!
        #expect(parse("__Secure-id=1; Secure", from: https) != nil)
        #expect(parse("__Secure-id=1", from: https) == nil)
        #expect(parse("__Secure-id=1; Secure") == nil, "not over http")
        #expect(parse("__Host-id=1; Secure; Path=/", from: https) != nil)
        #expect(parse("__Host-id=1; Secure", from: https) == nil, "default path /a is not /")
        #expect(parse("__Host-id=1; Secure; Path=/; Domain=example.com", from: https) == nil)
        #expect(parse("__host-id=1; Path=/", from: https) == nil)
    }

    // MARK: Malformed input

    @Test(arguments: [
        "",
        "   ",
        "noequals",
        "noequals; Path=/",
        "=value",
        "  =value",
        "; a=b",
        "a\u{0}=b",
        "a=b\u{0}c",
        "a=b\u{7F}",
        "a\r\nSet-Cookie: x=y",
        "a=b\u{1B}[31m",
    ])
    func malformedIsIgnored(text: String) {
        #expect(parse(text) == nil, "\(text.debugDescription)")
    }

    @Test func tabsInValuesAreAllowed() throws {
        #expect(try #require(parse("a=x\ty")).value == "x\ty")
    }

    @Test func sizeLimits() throws {
        let longName = String(repeating: "n", count: 2048)
        #expect(parse("\(longName)=\(String(repeating: "v", count: 2048))") != nil)
        #expect(parse("\(longName)=\(String(repeating: "v", count: 2049))") == nil)
        let longPath = "/" + String(repeating: "p", count: 1024)
        #expect(try #require(parse("a=b; Path=\(longPath)")).path == "/docs/a", "an over-long attribute is skipped")
    }

    @Test func urlWithoutHostIsIgnored() {
        #expect(parse("a=b", from: URL(string: "file:///tmp/x")!) == nil)
    }

    @Test func combiningMarksDoNotHideSeparators() throws {
        // "=\u{301}" is one Character; the parser must still split at the "=" byte.
        let cookie = try #require(parse("a=\u{301}b;\u{301} Path=/x"))
        #expect(cookie.name == "a")
        #expect(cookie.value == "\u{301}b")
        #expect(cookie.path == "/docs/a", "the attribute's name is \"\u{301} Path\", unknown")
    }

    @Test func hostileInputNeverCrashes() {
        var random = SeededRandom(seed: SeededRandom.seed(default: 6265))
        let attributes = ["Expires=", "Max-Age=", "Domain=", "Path=", "Secure", "HttpOnly", "SameSite=", "=", ";", " "]
        for _ in 0..<2000 {
            var text = random.hostileString(maxScalars: 24)
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                text += "; " + (attributes.randomElement(using: &random) ?? "") + random.hostileString(maxScalars: 12)
            }
            if let cookie = parse(text) {
                #expect(!cookie.name.isEmpty)
                #expect(Cookie.isCookieText(cookie.name) && Cookie.isCookieText(cookie.value))
                #expect(cookie.path.hasPrefix("/"))
                _ = cookie.matches(Self.page)
                _ = cookie.description
            }
        }
    }

    // MARK: Programmatic cookies

    @Test func memberwiseInitValidates() throws {
        let cookie = try Cookie(name: "a", value: "b", domain: ".Example.com", hostOnly: false, path: "")
        #expect(cookie.domain == "example.com" && cookie.path == "/")
        for (name, value, domain, path) in [
            ("", "v", "example.com", "/"), ("a=b", "v", "example.com", "/"), ("a;", "v", "example.com", "/"),
            ("a", "v\r\n", "example.com", "/"), ("a", "v", "", "/"), ("a", "v", "exa/mple.com", "/"),
            ("a", "v", "example.com", "relative"), ("a", "v", "example.com", "/x;y"),
        ] {
            #expect(throws: CourierError.self, "\(name) \(value) \(domain) \(path)") {
                try Cookie(name: name, value: value, domain: domain, path: path)
            }
        }
        do {
            _ = try Cookie(name: "a\nb", value: "v", domain: "example.com")
            Issue.record("expected .invalidCookie")
        } catch let error as CourierError {
            #expect(error.code == .invalidCookie)
            #expect(error.message.contains("a\\nb"))
        }
    }

    @Test func descriptionIsSetCookieSyntax() throws {
        let cookie = try #require(
            parse(
                "id=7; Domain=example.com; Path=/; Expires=Wed, 09 Jun 2021 10:18:14 GMT; Secure; HttpOnly; SameSite=Lax"
            ))
        #expect(
            cookie.description
                == "id=7; Domain=example.com; Path=/; Expires=Wed, 09 Jun 2021 10:18:14 GMT; Secure; HttpOnly; SameSite=Lax"
        )
    }
}

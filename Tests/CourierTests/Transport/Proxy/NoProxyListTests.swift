import Courier
import Foundation
import Testing

@testable import CourierCore

/// `NO_PROXY` as curl documents it (CURLOPT_NOPROXY), plus ports.
@Suite struct NoProxyListTests {
    func matches(_ list: String, _ url: String) -> Bool {
        guard let url = URL(string: url) else { return false }
        return NoProxyList(list).matches(url)
    }

    @Test func aStarMatchesEveryHost() {
        #expect(matches("*", "http://example.com/"))
        #expect(matches("a.test, *", "https://10.1.2.3/"))
        #expect(!matches("", "http://example.com/"))
    }

    @Test func aNameMatchesItselfAndItsSubdomainsWithOrWithoutALeadingDot() {
        for list in ["example.com", ".example.com", "EXAMPLE.com.", "other.test,example.com"] {
            #expect(matches(list, "http://example.com/"), "\(list)")
            #expect(matches(list, "http://www.Example.com:8080/x"), "\(list)")
            #expect(!matches(list, "http://notexample.com/"), "\(list)")
            #expect(!matches(list, "http://example.com.evil.test/"), "\(list)")
        }
        #expect(matches("localhost", "http://localhost./"))
    }

    @Test func addressesMatchExactlyOrByNetworkAndNeverBySuffix() {
        #expect(matches("127.0.0.1", "http://127.0.0.1:8080/"))
        #expect(!matches("127.0.0.1", "http://127.0.0.2/"))
        #expect(matches("10.0.0.0/8", "http://10.200.3.4/"))
        #expect(!matches("10.0.0.0/8", "http://11.0.0.1/"))
        #expect(!matches("0.0.1", "http://127.0.0.1/"))
        #expect(matches("::1", "http://[::1]:9/"))
        #expect(matches("[::1]", "http://[::1]/"))
        #expect(matches("fd00::/8", "http://[fd12::3]/"))
        #expect(!matches("fd00::/8", "http://[fe80::1]/"))
        #expect(!matches("::1", "http://127.0.0.1/"))
    }

    @Test func aPortLimitsTheEntryToThatPort() {
        #expect(matches("example.com:8080", "http://example.com:8080/"))
        #expect(!matches("example.com:8080", "http://example.com/"))
        #expect(matches("example.com:443", "https://api.example.com/"))
        #expect(matches("127.0.0.1:80", "http://127.0.0.1/"))
        #expect(matches("[::1]:8080", "http://[::1]:8080/"))
        #expect(!matches("[::1]:8080", "http://[::1]:8081/"))
    }

    @Test func whiteSpaceAndCommasSeparateAndJunkIsSkipped() {
        #expect(matches(" a.test ,\tb.test ", "http://b.test/"))
        #expect(matches("1.2.3.4/99, b.test", "http://b.test/"))
        #expect(!matches("1.2.3.4/99", "http://1.2.3.4/"))
        #expect(NoProxyList(" , ,").isEmpty)
    }
}

import Courier
import Testing

@testable import CourierCore

@Suite("LocationValue (RFC 9110 §10.2.2, RFC 3986 §5.2)")
struct LocationValueTests {
    // RFC 3986 §5.4.1 and §5.4.2, the normal and abnormal examples.
    static let base = "http://a/b/c/d;p?q"
    static let rfcExamples: [(String, String)] = [
        ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"),
        (";x", "http://a/b/c/;x"), ("g;x", "http://a/b/c/g;x"), ("g;x?y#s", "http://a/b/c/g;x?y#s"),
        (".", "http://a/b/c/"), ("./", "http://a/b/c/"), ("..", "http://a/b/"), ("../", "http://a/b/"),
        ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../", "http://a/"), ("../../g", "http://a/g"),
        ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"),
        ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."),
        ("..g", "http://a/b/c/..g"), ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"),
        ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"), ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
        ("g;x=1/../y", "http://a/b/c/y"), ("g?y/./x", "http://a/b/c/g?y/./x"), ("g?y/../x", "http://a/b/c/g?y/../x"),
        ("g#s/./x", "http://a/b/c/g#s/./x"), ("g#s/../x", "http://a/b/c/g#s/../x"), ("http:g", "http:g"),
    ]

    @Test func resolvesTheRFC3986Examples() throws {
        for (reference, expected) in Self.rfcExamples {
            let location = try #require(LocationValue(reference))
            #expect(location.resolved(against: Self.base) == expected, "\(reference)")
        }
    }

    @Test func emptyReferenceIsInvalidAsAHeaderButResolvesAsTheBase() {
        #expect(LocationValue("") == nil)
        #expect(LocationValue("  ") == nil)
    }

    @Test func keepsTheRequestFragmentWhenTheLocationHasNone() {
        #expect(LocationValue("/next")?.resolved(against: "http://h/a#section") == "http://h/next#section")
        #expect(LocationValue("/next#other")?.resolved(against: "http://h/a#section") == "http://h/next#other")
    }

    @Test func resolvesAgainstABaseWithAnEmptyPathOrAPort() {
        #expect(LocationValue("x")?.resolved(against: "http://127.0.0.1:8080") == "http://127.0.0.1:8080/x")
        #expect(LocationValue("x")?.resolved(against: "http://[::1]:8080?q") == "http://[::1]:8080/x")
    }

    @Test func absoluteLocationsReplaceTheBase() throws {
        let location = try #require(LocationValue("https://other.test:8443/p/../q?x#y"))
        #expect(location.isAbsolute)
        #expect(location.resolved(against: "http://a/b") == "https://other.test:8443/q?x#y")
        #expect(try #require(LocationValue("//cdn.test/x")).isAbsolute == false)
        #expect(LocationValue("//cdn.test/x")?.resolved(against: "https://a/b") == "https://cdn.test/x")
    }

    @Test func encodesSpacesAndNonASCIIThatServersSendRaw() throws {
        let location = try #require(LocationValue(" /files/a b/ümlaut\"<>.txt "))
        #expect(location.reference == "/files/a%20b/%C3%BCmlaut%22%3C%3E.txt")
        #expect(location.resolved(against: "http://h/") == "http://h/files/a%20b/%C3%BCmlaut%22%3C%3E.txt")
    }

    @Test(arguments: ["/a\r\nSet-Cookie: x=1", "/a\0b", "/a\tb", "\u{7F}"])
    func rejectsControlCharacters(_ value: String) {
        #expect(LocationValue(value) == nil, "\(value.debugDescription)")
    }

    @Test func refusesBadBasesAndSchemeLikeReferences() {
        #expect(LocationValue("/x")?.resolved(against: "/relative/base") == nil)
        #expect(LocationValue("/x")?.resolved(against: "1http://a/") == nil)
        #expect(LocationValue("a b:c")?.resolved(against: "http://a/") == nil)
        #expect(LocationValue("./a:b")?.resolved(against: "http://h/d/") == "http://h/d/a:b")
    }
}

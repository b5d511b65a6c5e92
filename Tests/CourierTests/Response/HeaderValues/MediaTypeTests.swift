import Courier
import Testing

@testable import CourierCore

@Suite("MediaType (RFC 9110 §8.3.1)")
struct MediaTypeTests {
    @Test func parsesTypeSubtypeAndParameters() throws {
        let mediaType = try #require(MediaType("Text/HTML; Charset=\"UTF-8\"; level=1"))
        #expect(mediaType.type == "text")
        #expect(mediaType.subtype == "html")
        #expect(mediaType.essence == "text/html")
        #expect(mediaType.parameters == [.init(name: "charset", value: "UTF-8"), .init(name: "level", value: "1")])
        #expect(mediaType.charset == "utf-8")
        #expect(mediaType.parameter("LEVEL") == "1")
        #expect(mediaType.parameter("missing") == nil)
    }

    @Test func unquotesQuotedPairs() throws {
        let mediaType = try #require(MediaType(#"multipart/form-data; boundary="a \"b\" \\c;d""#))
        #expect(mediaType.parameter("boundary") == #"a "b" \c;d"#)
        #expect(mediaType.description == #"multipart/form-data;boundary="a \"b\" \\c;d""#)
    }

    @Test func allowsOptionalWhitespaceAndEmptyParameters() throws {
        let mediaType = try #require(MediaType("  application/vnd.api+json ;;  q=0.5 ; "))
        #expect(mediaType.essence == "application/vnd.api+json")
        #expect(mediaType.parameters == [.init(name: "q", value: "0.5")])
    }

    @Test func firstRepeatedParameterWins() throws {
        let mediaType = try #require(MediaType("text/plain; charset=latin1; charset=utf-8"))
        #expect(mediaType.charset == "latin1")
    }

    @Test func emptyCharsetIsNil() throws {
        #expect(try #require(MediaType(#"text/plain; charset="""#)).charset == nil)
        #expect(try #require(MediaType("text/plain")).charset == nil)
    }

    @Test(arguments: [
        "", " ", "text", "text/", "/html", "text/html/x", "te xt/html", "text/html; charset",
        "text/html; charset=", "text/html; charset = utf-8", "text/html; charset=\"utf-8",
        "text/html; a=b c", "text/html; a=\"\u{1}\"", "text/html; a=\"x\\", "text/html charset=utf-8",
        "tëxt/html", "text/html; =x",
    ])
    func rejectsInvalidValues(_ value: String) {
        #expect(MediaType(value) == nil, "\(value.debugDescription)")
    }

    @Test func trailingSemicolonIsAnEmptyParameter() throws {
        #expect(try #require(MediaType("text/html;")).parameters.isEmpty)
    }

    @Test func matchesWildcards() throws {
        let json = try #require(MediaType("application/json; charset=utf-8"))
        #expect(json.matches(try #require(MediaType("application/*"))))
        #expect(json.matches(try #require(MediaType("*/*"))))
        #expect(json.matches(try #require(MediaType("Application/JSON"))))
        #expect(!json.matches(try #require(MediaType("text/json"))))
    }

    @Test func descriptionRoundTrips() throws {
        let mediaType = try #require(MediaType(#"Text/Plain; Format=flowed; x="a b""#))
        #expect(mediaType.description == #"text/plain;format=flowed;x="a b""#)
        #expect(MediaType(mediaType.description) == mediaType)
    }
}

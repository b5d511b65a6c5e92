import Courier
import Foundation
import HTTPTypes
import Testing

@testable import CourierCore

@Suite struct ResponseHeadTests {
    private func head(contentLength: String?) -> ResponseHead {
        var fields = HTTPFields()
        if let contentLength { fields[.contentLength] = contentLength }
        return ResponseHead(status: .ok, headerFields: fields, url: URL(string: "http://127.0.0.1/")!)
    }

    @Test func expectedContentLengthParsesDigitsAroundBlanks() {
        #expect(head(contentLength: "1234").expectedContentLength == 1234)
        #expect(head(contentLength: " \t42 ").expectedContentLength == 42)
        #expect(head(contentLength: "0").expectedContentLength == 0)
    }

    @Test func expectedContentLengthRejectsWhatIsNotALength() {
        #expect(head(contentLength: nil).expectedContentLength == nil)
        #expect(head(contentLength: "").expectedContentLength == nil)
        #expect(head(contentLength: "-1").expectedContentLength == nil)
        #expect(head(contentLength: "+5").expectedContentLength == nil)
        #expect(head(contentLength: "1 2").expectedContentLength == nil)
        #expect(head(contentLength: "99999999999999999999").expectedContentLength == nil)
        #expect(head(contentLength: "9223372036854775808").expectedContentLength == nil)
        #expect(head(contentLength: " \t ").expectedContentLength == nil)
        #expect(head(contentLength: "12a").expectedContentLength == nil)
    }

    @Test func twoContentLengthFieldsAreNoLengthAndTheNameMatchesInAnyCase() throws {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .contentLength, value: "5"))
        fields.append(HTTPField(name: .contentLength, value: "5"))
        let url = URL(string: "http://127.0.0.1/")!
        #expect(ResponseHead(status: .ok, headerFields: fields, url: url).expectedContentLength == nil)
        let lowercase = try #require(HTTPField.Name("content-length"))
        let uppercase = try #require(HTTPField.Name("CONTENT-LENGTH"))
        #expect(ResponseHead(status: .ok, headerFields: [lowercase: "12"], url: url).expectedContentLength == 12)
        #expect(ResponseHead(status: .ok, headerFields: [uppercase: "13"], url: url).expectedContentLength == 13)
    }

    @Test func aContentCodingOtherThanIdentityIsSeenInAnyFieldAndCase() {
        let url = URL(string: "http://127.0.0.1/")!
        func coded(_ values: [String]) -> Bool {
            var fields = HTTPFields()
            for value in values { fields.append(HTTPField(name: .contentEncoding, value: value)) }
            return ResponseHead(status: .ok, headerFields: fields, url: url).hasContentCoding
        }
        #expect(!coded([]))
        #expect(!coded(["identity"]))
        #expect(!coded(["IDENTITY"]))
        #expect(coded(["gzip"]))
        #expect(coded(["identity", "gzip"]))
        #expect(coded(["identityx"]))
        #expect(coded(["identit"]))
    }

    @Test func expectedContentLengthTakesTheLargestInt64AndLeadingZeros() {
        #expect(head(contentLength: "9223372036854775807").expectedContentLength == Int64.max)
        #expect(head(contentLength: "007").expectedContentLength == 7)
    }
}

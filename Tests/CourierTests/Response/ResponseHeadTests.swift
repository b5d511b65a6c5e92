import Foundation
import HTTPTypes
import Testing

@testable import Courier

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

    @Test func expectedContentLengthTakesTheLargestInt64AndLeadingZeros() {
        #expect(head(contentLength: "9223372036854775807").expectedContentLength == Int64.max)
        #expect(head(contentLength: "007").expectedContentLength == 7)
    }
}

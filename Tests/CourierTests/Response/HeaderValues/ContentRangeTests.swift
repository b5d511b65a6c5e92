import Courier
import Testing

@testable import CourierCore

@Suite("ContentRange (RFC 9110 §14.4)")
struct ContentRangeTests {
    @Test func parsesASatisfiedRange() throws {
        let contentRange = try #require(ContentRange("bytes 0-499/1234"))
        #expect(contentRange == .satisfied(first: 0, last: 499, completeLength: 1234))
        #expect(contentRange.range == 0...499)
        #expect(contentRange.byteCount == 500)
        #expect(contentRange.completeLength == 1234)
    }

    @Test func parsesAnUnknownCompleteLength() {
        #expect(ContentRange("bytes 500-999/*") == .satisfied(first: 500, last: 999, completeLength: nil))
    }

    @Test func parsesAnUnsatisfiedRange() throws {
        let contentRange = try #require(ContentRange("bytes */1234"))
        #expect(contentRange == .unsatisfied(completeLength: 1234))
        #expect(contentRange.range == nil)
        #expect(contentRange.byteCount == 0)
        #expect(contentRange.completeLength == 1234)
    }

    @Test func acceptsTheUnitInAnyCaseAndSurroundingWhitespace() {
        #expect(ContentRange("  BYTES 7-7/8 ") == .satisfied(first: 7, last: 7, completeLength: 8))
    }

    @Test func acceptsTheLargestRanges() {
        let max = Int64.max
        #expect(ContentRange("bytes 0-\(max - 1)/\(max)") == .satisfied(first: 0, last: max - 1, completeLength: max))
        #expect(ContentRange("bytes */\(max)") == .unsatisfied(completeLength: max))
    }

    @Test(arguments: [
        "", "bytes", "bytes ", "bytes 0-499", "bytes 0-499/", "bytes 500-499/1000", "bytes 0-1000/1000",
        "bytes 0-0/0", "items 0-1/2", "bytes=0-499/1234", "bytes  0-499/1234", "bytes 0 -499/1234",
        "bytes -1-499/1234", "bytes 0-499/-1", "bytes */*", "bytes */", "bytes 0-499/1234 x",
        "bytes 0-499/1234,5", "bytes 0x10-0x20/100", "bytes 0-9223372036854775808/*",
        "bytes 0-9223372036854775807/*", "bytes 1-2/99999999999999999999", "bytes ١-٢/٣",
    ])
    func rejectsInvalidValues(_ value: String) {
        #expect(ContentRange(value) == nil, "\(value.debugDescription)")
    }
}

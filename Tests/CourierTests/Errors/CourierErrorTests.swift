import Courier
import Foundation
import Testing

@testable import CourierCore

/// `CourierError` keeps its fields in a shared box (copy on write); these check that it still
/// behaves as a plain value.
@Suite struct CourierErrorTests {
    private static func sample() -> CourierError {
        CourierError(
            .invalidURL, "the URL \"ht tp://x\" is not valid", offendingInput: "ht tp://x",
            underlyingError: CocoaError(.fileNoSuchFile), responseData: Data([1, 2, 3]))
    }

    @Test func aChangedCopyLeavesTheOriginalAsItWas() throws {
        let original = Self.sample()
        var copy = original
        copy.code = .timedOut
        copy.message = "changed"
        copy.offendingInput = nil
        copy.underlyingError = nil
        copy.responseData = Data([9])
        copy.response = ResponseHead(
            status: .notFound, headerFields: [:], url: try #require(URL(string: "http://127.0.0.1/")))
        copy.metrics = TaskMetrics.unrecorded

        #expect(original.code == .invalidURL)
        #expect(original.message == "the URL \"ht tp://x\" is not valid")
        #expect(original.offendingInput == "ht tp://x")
        #expect(original.underlyingError is CocoaError)
        #expect(original.responseData == Data([1, 2, 3]))
        #expect(original.response == nil)
        #expect(original.metrics == nil)

        #expect(copy.code == .timedOut)
        #expect(copy.message == "changed")
        #expect(copy.offendingInput == nil)
        #expect(copy.underlyingError == nil)
        #expect(copy.responseData == Data([9]))
        #expect(copy.response?.statusCode == 404)
        #expect(copy.metrics != nil)
    }

    @Test func aSoleOwnerChangesItsErrorInPlaceAndKeepsEveryOtherField() {
        var error = Self.sample()
        error.message = "first"
        error.message += ", then more"
        #expect(error.message == "first, then more")
        #expect(error.offendingInput == "ht tp://x")
        #expect(error.responseData == Data([1, 2, 3]))
    }

    /// Copies changed on many threads at once: each keeps its own change and the shared
    /// original none (run under the thread sanitizer in CI).
    @Test func copiesChangedConcurrentlyStayApart() async {
        let original = Self.sample()
        let messages = await withTaskGroup(of: String.self) { group in
            for index in 0..<64 {
                group.addTask {
                    var copy = original
                    copy.message = "copy \(index)"
                    copy.offendingInput = "input \(index)"
                    return "\(copy.message)|\(copy.offendingInput ?? "")"
                }
            }
            return await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(messages == Set((0..<64).map { "copy \($0)|input \($0)" }))
        #expect(original.message == "the URL \"ht tp://x\" is not valid")
        #expect(original.offendingInput == "ht tp://x")
    }
}
